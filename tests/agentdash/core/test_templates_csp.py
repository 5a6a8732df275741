"""STYLE rules 11/12: templates stay CSP-clean. Every ``<script>`` carries
``nonce="{{ csp_nonce }}"`` (data goes through ``json_script``; code lives in ES modules
under static/), and no template has an inline ``<style>`` block, a ``style=`` attribute or
an ``on*=`` event handler: the policy would block them in the browser anyway.

Every template directory of the project is scanned (``templates/`` and each app's), not
Django's own (admin) templates.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.agentdash.project_files import ROOT, project_template_dirs, project_templates, rel

NONCE_ATTR = 'nonce="{{ csp_nonce }}"'

_TAG = re.compile(r"<(?P<name>[A-Za-z][A-Za-z0-9-]*)(?P<attrs>(?:[^>\"']|\"[^\"]*\"|'[^']*')*)>")
_HANDLER = re.compile(r"(?<![\w:.-])(on[a-z]+)\s*=", re.IGNORECASE)
_STYLE_ATTR = re.compile(r"(?<![\w:.-])style\s*=", re.IGNORECASE)


def csp_problems(text: str) -> list[str]:
    """What the CSP would block in this template source (empty when clean)."""
    problems = []
    for match in _TAG.finditer(text):
        name, attrs = match.group("name").lower(), match.group("attrs")
        line = text.count("\n", 0, match.start()) + 1
        if name == "script" and NONCE_ATTR not in attrs:
            problems.append(f"line {line}: <script> without {NONCE_ATTR}")
        if name == "style":
            problems.append(f"line {line}: inline <style> block (use a stylesheet)")
        if _STYLE_ATTR.search(attrs):
            problems.append(f"line {line}: style= attribute on <{name}> (use a class)")
        for handler in _HANDLER.findall(attrs):
            problems.append(f"line {line}: {handler}= handler on <{name}> (use an ES module)")
        if re.search(r"""(?:href|src|action)\s*=\s*["']?\s*javascript:""", attrs, re.IGNORECASE):
            problems.append(f"line {line}: javascript: URL on <{name}>")
    return problems


def test_the_project_templates_are_found() -> None:
    dirs = project_template_dirs()
    assert ROOT / "templates" in dirs
    names = {rel(p) for p in project_templates()}
    assert "templates/base.html" in names
    assert "agentdash/dashboard/templates/dashboard/session.html" in names
    assert not any("django/contrib" in name for name in names)


@pytest.mark.parametrize("path", project_templates(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_template_is_csp_clean(path: Path) -> None:
    problems = csp_problems(path.read_text(encoding="utf-8"))
    assert not problems, f"{path.relative_to(ROOT)}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize(
    "source",
    [
        "<script>alert(1)</script>",
        '<script src="/static/x.js"></script>',
        '<script type="module" nonce="{{ nonce }}">',
        "<style>body{}</style>",
        '<div style="color:red">',
        "<p STYLE='x'>",
        '<button onclick="go()">',
        "<img src=x onerror=alert(1)>",
        '<body\n  onload="init()">',
        '<a href="javascript:alert(1)">',
        '<div class="x" {% if a %}onmouseover="f()"{% endif %}>',
    ],
)
def test_the_scanner_catches(source: str) -> None:
    assert csp_problems(source)


@pytest.mark.parametrize(
    "source",
    [
        '<script type="module" src="/static/app.js" nonce="{{ csp_nonce }}"></script>',
        '<script nonce="{{ csp_nonce }}">import("/static/x.js")</script>',
        '<div data-onclick="x" class="stylesheet">',
        '<link rel="stylesheet" href="/static/core/css/base.css">',
        "<p>Turn the callback on = off, set style = bold in text.</p>",
        '<input aria-label="one" name="onboarding">',
    ],
)
def test_the_scanner_allows(source: str) -> None:
    assert not csp_problems(source)
