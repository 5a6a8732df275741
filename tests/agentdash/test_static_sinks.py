"""STYLE rules 11/12 for every script of the project (``static/`` and each app's
``static/<app>/``, found as the staticfiles finders find them): untrusted text only through
safe sinks.

- The only HTML sink is ``setSanitizedHtml`` in static/core/js/dom.js (one ``innerHTML``);
  no other file uses innerHTML, outerHTML, insertAdjacentHTML, document.write or other ways
  of parsing strings as HTML, and ``setSanitizedHtml`` is only ever given an ``.html`` field
  (what the server's sanitizer produced).
- No code from strings (``eval``, ``new Function``, string timers).
- No style attributes (the CSP forbids them): styles change through classes or
  ``style.setProperty`` on custom properties.
- Every relative ``import`` of a module resolves to a static file (in the URL space the
  browser sees: one app's script may import another's), and every ``{% static %}`` a
  template names exists.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

import pytest
from django.contrib.staticfiles import finders

from tests.agentdash.project_files import ROOT, project_static, project_templates, rel

STATIC = project_static()
DOM_HELPER = ROOT / "static" / "core" / "js" / "dom.js"

HTML_SINKS = re.compile(
    r"\.innerHTML\b|\.outerHTML\b|insertAdjacentHTML|document\.write|\bDOMParser\b"
    r"|createContextualFragment|\.srcdoc\b|parseHTMLUnsafe|setHTMLUnsafe"
)
CODE_FROM_STRINGS = re.compile(r"\beval\s*\(|\bnew\s+Function\b|set(?:Timeout|Interval)\(\s*[\"'`]")
STYLE_WRITES = re.compile(
    r"setAttribute\(\s*[\"']style[\"']|\.style\s*=[^=]|\.style\.cssText|\.style\.(?!setProperty\b|removeProperty\b)\w+\s*=[^=]"
)
SANITIZED_CALL = re.compile(r"(?<!function )setSanitizedHtml\(([^,()]+),\s*([^)]*)\)")
IMPORT = re.compile(r"""^\s*import\s+(?:[^"';]+\s+from\s+)?["'](\.{1,2}/[^"']+)["']""", re.M)
STATIC_TAG = re.compile(r"""\{%\s*static\s+["']([^"']+)["']\s*%\}""")


def scripts() -> list[Path]:
    return [path for name, path in STATIC.items() if name.endswith(".js")]


def static_name(path: Path) -> str:
    return next(name for name, found in STATIC.items() if found == path)


def code_of(path: Path) -> str:
    """The script without its comments (JSDoc may name the sinks it warns about)."""
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"(?m)^\s*//.*$|(?<=[;{}),])\s*//.*$", "", text)


def test_there_are_scripts_to_scan() -> None:
    assert {
        "static/core/js/dom.js",
        "agentdash/dashboard/static/dashboard/js/session/session.js",
        "agentdash/live/static/live/js/socket.js",
        "agentdash/dashboard/static/dashboard/js/chat/chat.js",
        "agentdash/dashboard/static/dashboard/js/timeline/timeline.js",
        "agentdash/dashboard/static/dashboard/js/controls/controls.js",
    } <= {rel(p) for p in scripts()}


@pytest.mark.parametrize("path", scripts(), ids=rel)
def test_no_html_sink_outside_the_one_helper(path: Path) -> None:
    found = HTML_SINKS.findall(code_of(path))
    if path == DOM_HELPER:
        assert found == [".innerHTML"], "dom.js: exactly one innerHTML, in setSanitizedHtml"
    else:
        assert not found, f"{rel(path)} uses {found}: use el()/textContent, or setSanitizedHtml"


def test_the_one_sink_is_set_sanitized_html() -> None:
    code = code_of(DOM_HELPER)
    body = re.search(r"export function setSanitizedHtml\([^)]*\)\s*\{(.*?)\n\}", code, re.S)
    assert body and ".innerHTML" in body.group(1)
    assert code.count(".innerHTML") == 1


@pytest.mark.parametrize("path", scripts(), ids=rel)
def test_only_html_fields_reach_the_sink(path: Path) -> None:
    for _, argument in SANITIZED_CALL.findall(code_of(path)):
        assert re.fullmatch(r"[\w.]+\.html", argument.strip()), (
            f"{rel(path)}: setSanitizedHtml(…, {argument}) — only server-sanitized `.html` fields"
        )


@pytest.mark.parametrize("path", scripts(), ids=rel)
def test_no_code_from_strings(path: Path) -> None:
    assert not CODE_FROM_STRINGS.findall(code_of(path))


@pytest.mark.parametrize("path", scripts(), ids=rel)
def test_no_style_attributes(path: Path) -> None:
    assert not STYLE_WRITES.findall(code_of(path)), (
        f"{rel(path)} writes a style attribute: use a class or style.setProperty('--var', …)"
    )


@pytest.mark.parametrize("path", scripts(), ids=rel)
def test_relative_imports_resolve(path: Path) -> None:
    here = posixpath.dirname(static_name(path))
    for target in IMPORT.findall(path.read_text(encoding="utf-8")):
        name = posixpath.normpath(posixpath.join(here, target))
        assert name in STATIC, f"{rel(path)} imports {target}: no static file {name}"


@pytest.mark.parametrize(
    "source",
    [
        "node.innerHTML = text;",
        "node.outerHTML = x",
        "node.insertAdjacentHTML('beforeend', x)",
        "document.write(x)",
        "new DOMParser().parseFromString(x, 'text/html')",
        "range.createContextualFragment(x)",
    ],
)
def test_the_sink_scanner_catches(source: str) -> None:
    assert HTML_SINKS.search(source)


@pytest.mark.parametrize(
    "source",
    [
        "node.setAttribute('style', 'color: red')",
        "node.style = 'x'",
        "node.style.cssText = 'x'",
        "node.style.width = '3px'",
    ],
)
def test_the_style_scanner_catches(source: str) -> None:
    assert STYLE_WRITES.search(source)


def test_the_style_scanner_allows_custom_properties() -> None:
    assert not STYLE_WRITES.search("row.style.setProperty('--bar-left', '3%')")
    assert not STYLE_WRITES.search("if (a.style === b.style) {}")


def test_every_static_file_a_template_names_exists() -> None:
    templates = project_templates()
    assert any(rel(t) == "agentdash/dashboard/templates/dashboard/session.html" for t in templates)
    missing = [
        f"{rel(template)}: {name}"
        for template in templates
        for name in STATIC_TAG.findall(template.read_text(encoding="utf-8"))
        if finders.find(name) is None  # ours, or a library's (the admin's css)
    ]
    assert not missing
