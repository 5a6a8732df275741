"""Django's ASGI handler as daphne serves it (``agentdash.core.asgi_handler``): a request's
middleware and view run in one trip to its thread, answering exactly as Django's own."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from asgiref import sync
from asgiref.testing import ApplicationCommunicator
from django.core.handlers.asgi import ASGIHandler
from django.http import HttpRequest, HttpResponse
from django.test import override_settings
from django.urls import path

from agentdash.core.asgi_handler import OneTripASGIHandler, RequestThreads

pytestmark = pytest.mark.django_db(transaction=True)


async def request(
    app: object, path: str, method: str = "GET"
) -> tuple[int, dict[bytes, bytes], bytes]:
    """The status, the headers (by lower-case name) and the body of one request."""
    path, _, query = path.partition("?")
    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "query_string": query.encode(),
        "headers": [(b"host", b"testserver")],
    }
    communicator = ApplicationCommunicator(app, scope)
    await communicator.send_input({"type": "http.request", "body": b""})
    start = await communicator.receive_output(10)
    body = b""
    while True:
        message = await communicator.receive_output(10)
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    await communicator.wait(10)  # the response closed, the request finished
    headers = {name.lower(): value for name, value in start["headers"]}
    return start["status"], headers, body


@contextlib.contextmanager
def trips_counted() -> Iterator[list[int]]:
    """How many times code went from the event loop to a thread (``sync_to_async``)."""
    counted = [0]
    call = sync.SyncToAsync.__call__

    async def counting(self: Any, *args: Any, **kwargs: Any) -> Any:
        counted[0] += 1
        return await call(self, *args, **kwargs)

    sync.SyncToAsync.__call__ = counting  # type: ignore[method-assign]
    try:
        yield counted
    finally:
        sync.SyncToAsync.__call__ = call  # type: ignore[method-assign]


async def test_a_page_goes_through_every_middleware_in_one_trip() -> None:
    ours, django = OneTripASGIHandler(), ASGIHandler()
    await request(ours, "/login/")  # warm: first-request work out of the count
    await request(django, "/login/")
    with trips_counted() as ours_trips:
        status, headers, body = await request(ours, "/login/")
    with trips_counted() as django_trips:
        django_status, django_headers, django_body = await request(django, "/login/")
    # The request-started signal, the middleware chain with the view, the response's close.
    assert ours_trips[0] == 3
    assert django_trips[0] > 10
    assert (status, django_status) == (200, 200)
    assert b'name="csrfmiddlewaretoken"' in body and b'name="csrfmiddlewaretoken"' in django_body
    for name in (b"content-security-policy", b"x-frame-options", b"x-request-id", b"vary"):
        assert (name in headers) and (name in django_headers), name
    assert (
        headers[b"content-security-policy"].split(b"nonce-")[0]
        == (django_headers[b"content-security-policy"].split(b"nonce-")[0])
    )


async def test_refusals_of_the_middleware_are_the_same() -> None:
    for app in (OneTripASGIHandler(), ASGIHandler()):
        # CSRF: a form posted without its token.
        status, _, _ = await request(app, "/login/", method="POST")
        assert status == 403
        # The input's hygiene: a NUL in the query.
        status, _, _ = await request(app, "/login/?next=%00")
        assert status == 400


async def test_an_async_view_still_answers() -> None:
    status, headers, body = await request(OneTripASGIHandler(), "/health/")
    assert status in (200, 503)  # the process's health, whichever it is
    assert headers[b"content-type"] == b"application/json"
    assert b'"checks"' in body


# ── The request threads ────────────────────────────────────────────────────────────────────
threads_seen: list[int] = []


def _where(request: HttpRequest) -> HttpResponse:
    threads_seen.append(threading.get_ident())
    return HttpResponse(b"here")


urlpatterns = [path("where/", _where)]


@pytest.fixture
def own_urls() -> Iterator[None]:
    threads_seen.clear()
    with override_settings(ROOT_URLCONF=__name__):
        yield


async def test_requests_one_after_another_run_on_one_kept_thread(own_urls: None) -> None:
    handler = OneTripASGIHandler()
    for _ in range(3):
        status, _, body = await request(handler, "/where/")
        assert (status, body) == (200, b"here")
    assert len(set(threads_seen)) == 1
    assert threads_seen[0] != threading.get_ident()  # not the event loop's
    assert handler.threads.idle_count == 1


async def test_requests_at_once_each_have_a_thread_and_all_are_kept(own_urls: None) -> None:
    handler = OneTripASGIHandler()
    results = await asyncio.gather(*(request(handler, "/where/") for _ in range(4)))
    assert [status for status, _, _ in results] == [200] * 4
    assert handler.threads.idle_count == len(set(threads_seen)) >= 1


def test_a_thread_with_work_still_running_is_not_kept() -> None:
    """Whatever ended the request (asgiref waits for a left request's view today), a thread
    goes to the next request only with nothing of the last one on it."""
    threads = RequestThreads()
    busy = threads.take()
    release = threading.Event()
    running = busy.submit(release.wait, 10)
    threads.give(busy)
    assert threads.idle_count == 0
    assert threads.take() is not busy  # the next request's thread is another
    release.set()
    assert running.result(10) is True
    done = threads.take()
    done.submit(lambda: None).result(10)
    threads.give(done)
    assert threads.idle_count == 1 and threads.take() is done
