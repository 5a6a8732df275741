"""The sanitizer's golden cases (``golden/render.*.json``): each file's ``markdown``, rendered
by ``agentdash.core.rendering.render_untrusted``, must give exactly its ``html``. ``about``
says what the case pins. A change of policy shows here as a diff to review, case by case.

The hostile corpus (tests/security/xss_corpus.json) checks properties of every vector's
output instead (tests/security/test_corpus_sanitizer.py); these pin exact outputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentdash.core.rendering import render_untrusted

GOLDEN = Path(__file__).parent / "golden"
FILES = sorted(GOLDEN.glob("render.*.json"))


def load(path: Path) -> dict[str, Any]:
    case: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return case


def test_there_are_golden_cases() -> None:
    names = {path.name for path in FILES}
    assert {"render.image_only.json", "render.link_javascript.json"} <= names
    assert len(FILES) >= 20


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name.removeprefix("render.")[:-5])
def test_golden_case(path: Path) -> None:
    case = load(path)
    assert set(case) == {"about", "markdown", "html"}, f"{path.name}: keys"
    assert render_untrusted(case["markdown"]) == case["html"], case["about"]


def test_an_image_only_message_is_its_alt_text() -> None:
    """The alt text shows, as text: no element but the paragraph, no trace of the URL."""
    html = render_untrusted("![a chart of *sales*](http://x.example/y.png)")
    assert html == "<p>a chart of sales</p>\n"
