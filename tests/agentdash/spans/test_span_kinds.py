"""One definition of the kinds of span: the runtime names them (``StepKind``), the server's
summaries and the ingest mapping use that, and the browser's one registry
(``span_kinds.js``: label, colour) holds the same kinds and guesses alike — checked by
running the real module in Node — with a colour of every theme for each."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from agentdash.ingest.semconv import span_kind
from agentdash.spans.summaries import span_kind_of
from runtime.telemetry.attributes import StepKind

ROOT = Path(settings.BASE_DIR)
REGISTRY = ROOT / "agentdash/dashboard/static/dashboard/js/common/span_kinds.js"
THEMES = sorted((ROOT / "static/core/css").glob("*.css"))

CASES: list[tuple[Any, str]] = [
    ("tool", "anything"),
    ("invocation", ""),
    (None, "invoke_agent capital_agent"),
    (None, "generate_content gemini"),
    (None, "execute_tool get_capital"),
    (None, "callback before_model"),
    ("bogus", "execute_tool x"),
    ("toString", ""),
    ("__proto__", "constructor"),
    ("", "chat gpt-4o"),  # another convention's name: the ingest maps it, the pages do not
    (7, "generate_content"),
    (None, "Invoke_agent"),
    (None, "\ud800callback"),
]


def _node(script: str) -> Any:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is needed to check the browser's registry (make test-js needs it too)")
    done = subprocess.run(
        [node, "--input-type=module", "-e", script],
        capture_output=True, text=True, timeout=60, check=True, cwd=ROOT,
    )  # fmt: skip
    return json.loads(done.stdout)


def _registry(expression: str) -> Any:
    return _node(
        f"const k = await import({json.dumps(REGISTRY.as_uri())});"
        f"process.stdout.write(JSON.stringify({expression}));"
    )


def test_the_browser_registry_has_the_runtimes_kinds_and_prefixes() -> None:
    kinds = _registry("[...k.SPAN_KINDS.keys()]")
    assert kinds == list(StepKind.ALL)
    assert [tuple(pair) for pair in _registry("k.NAME_KINDS")] == list(StepKind.BY_NAME_PREFIX)


def test_the_browser_guesses_every_kind_as_the_server_does() -> None:
    cases = json.dumps(json.dumps(CASES))  # a JS string literal of the JSON
    found = _registry(f"JSON.parse({cases}).map(([a, n]) => k.kindOf(a, n))")
    expected = [span_kind_of(kind_attribute=a, name=n) for a, n in CASES]
    assert found == expected
    assert set(expected) == {*StepKind.ALL, ""}  # the cases reach every kind and none


def test_every_kind_the_ingest_maps_to_is_one_of_ours() -> None:
    import agentdash.ingest.semconv as semconv

    mapped = {
        *semconv._OPERATION_KINDS.values(),
        *semconv._OPENINFERENCE_KINDS.values(),
        *(kind for _, kind in semconv._NAME_KINDS),
    }
    assert mapped <= set(StepKind.ALL)
    assert span_kind({}, "execute_tool lookup") == StepKind.TOOL


@pytest.mark.parametrize("theme", THEMES, ids=lambda p: p.name)
def test_every_theme_colours_every_kind(theme: Path) -> None:
    text = theme.read_text()
    if "--c-run:" not in text:
        pytest.fail(f"{theme.name} defines no span colours")  # every theme file sets them
    colours = {look["colour"] for look in _registry("[...k.SPAN_KINDS.values(), k.OTHER]")}
    for colour in colours:
        for name in (f"--c-{colour}", f"--c-{colour}-bg"):
            assert re.search(rf"{re.escape(name)}\s*:", text), (theme.name, name)
