"""In development daphne serves /static/ itself (as runserver does), on its event loop
(agentdash/core/static_serving.py): found through the staticfiles finders, kept while the file
is unchanged, revalidated by ETag, nothing outside the static folders."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from types import ModuleType

import pytest
from asgiref.testing import ApplicationCommunicator
from django.test import override_settings

from agentdash.core.static_serving import StaticFiles


@pytest.fixture
def asgi_module() -> Iterator[ModuleType]:
    import agentdash.asgi

    yield agentdash.asgi
    importlib.reload(agentdash.asgi)  # back to the application built with test settings


def http_app(module: ModuleType, *, debug: bool) -> object:
    with override_settings(DEBUG=debug):
        importlib.reload(module)
    return module.router.application_mapping["http"]


def test_static_files_are_served_with_debug_on(asgi_module: ModuleType) -> None:
    app = http_app(asgi_module, debug=True)
    assert isinstance(app, StaticFiles)


async def get(app: object, path: str) -> tuple[int, bytes]:
    status, _, body = await request(app, path)
    return status, body


async def request(
    app: object, path: str, method: str = "GET", headers: list[tuple[bytes, bytes]] | None = None
) -> tuple[int, dict[bytes, bytes], bytes]:
    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "query_string": b"",
        "headers": headers or [],
    }
    communicator = ApplicationCommunicator(app, scope)
    await communicator.send_input({"type": "http.request", "body": b""})
    start = await communicator.receive_output(5)
    body = b""
    while True:  # a file response may end with a message without "body"
        message = await communicator.receive_output(5)
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    await communicator.wait()
    return start["status"], dict(start["headers"]), body


async def test_the_base_stylesheet_is_served(asgi_module: ModuleType) -> None:
    status, body = await get(http_app(asgi_module, debug=True), "/static/core/css/base.css")
    assert status == 200
    assert b"--accent" in body


def test_no_static_handler_with_debug_off(asgi_module: ModuleType) -> None:
    assert not isinstance(http_app(asgi_module, debug=False), StaticFiles)


async def behind(scope: dict, receive: object, send: object) -> None:
    """The site behind the static files: a marker, so a test can tell who answered."""
    await send({"type": "http.response.start", "status": 299, "headers": []})  # type: ignore[operator]
    await send({"type": "http.response.body", "body": b"site"})  # type: ignore[operator]


@pytest.fixture
def folder(tmp_path: object) -> Iterator[object]:
    from pathlib import Path

    root = Path(str(tmp_path)) / "static"
    (root / "app" / "js").mkdir(parents=True)
    (root / "app" / "js" / "a.js").write_text('export const a = "ä";\n', encoding="utf-8")
    (root / "app" / "style.css").write_text("body { color: red }\n")
    (root.parent / "secret.txt").write_text("not for the web\n")
    with override_settings(STATICFILES_DIRS=[str(root)]):
        yield root


async def test_a_module_is_served_with_its_type_and_validators(folder: object) -> None:
    app = StaticFiles(behind, "/static/")
    status, headers, body = await request(app, "/static/app/js/a.js")
    assert status == 200
    assert body == 'export const a = "ä";\n'.encode()
    assert headers[b"content-type"] == b"text/javascript; charset=utf-8"
    assert headers[b"content-length"] == str(len(body)).encode()
    assert headers[b"cache-control"] == b"no-cache"
    assert headers[b"x-content-type-options"] == b"nosniff"
    assert headers[b"referrer-policy"] == b"same-origin"  # as SecurityMiddleware, from settings
    assert headers[b"etag"].startswith(b'"') and headers[b"last-modified"].endswith(b"GMT")
    status, _, body = await request(app, "/static/app/style.css")
    assert status == 200 and body.startswith(b"body")


async def test_an_unchanged_file_is_a_304_and_a_changed_one_is_read_again(folder: object) -> None:
    import os
    from pathlib import Path

    app = StaticFiles(behind, "/static/")
    _, headers, _ = await request(app, "/static/app/js/a.js")
    etag = headers[b"etag"]
    status, again, body = await request(
        app, "/static/app/js/a.js", headers=[(b"if-none-match", b'"other", ' + etag)]
    )
    assert (status, body) == (304, b"")
    assert again[b"etag"] == etag and b"content-length" not in again
    path = Path(str(folder)) / "app" / "js" / "a.js"
    path.write_text("export const a = 2;\n")
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000_000))
    status, changed, body = await request(
        app, "/static/app/js/a.js", headers=[(b"if-none-match", etag)]
    )
    assert (status, body) == (200, b"export const a = 2;\n")
    assert changed[b"etag"] != etag
    path.unlink()
    status, _, _ = await request(app, "/static/app/js/a.js")
    assert status == 404


@pytest.mark.parametrize(
    "path",
    [
        "/static/app/js/missing.js",
        "/static/app/js",  # a folder
        "/static/",
        "/static/../secret.txt",
        "/static/app/../../secret.txt",
        "/static/%2e%2e/secret.txt",
        "/static/app/%2e%2e/%2e%2e/secret.txt",
        "/static//etc/passwd",
        "/static/app\\..\\..\\secret.txt",
        "/static/app/js/a.js\x00.txt",
        "/static/app/js/a.js%00",
        "/static/app/\ud800.js",
        "/static/" + "a/" * 5000 + "x.js",
    ],
)
async def test_nothing_but_a_static_file_is_served(folder: object, path: str) -> None:
    status, _, body = await request(StaticFiles(behind, "/static/"), path)
    assert status == 404
    assert b"not for the web" not in body


async def test_head_has_no_body_and_other_methods_are_refused(folder: object) -> None:
    app = StaticFiles(behind, "/static/")
    status, headers, body = await request(app, "/static/app/js/a.js", method="HEAD")
    assert (status, body) == (200, b"")
    assert int(headers[b"content-length"]) > 0
    status, headers, _ = await request(app, "/static/app/js/a.js", method="POST")
    assert status == 405 and headers[b"allow"] == b"GET, HEAD"


async def test_other_paths_go_to_the_site(folder: object) -> None:
    app = StaticFiles(behind, "/static/")
    assert (await request(app, "/sessions/"))[2] == b"site"
    assert (await request(app, "/staticx/app/js/a.js"))[2] == b"site"
