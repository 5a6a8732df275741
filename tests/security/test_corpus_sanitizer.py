"""Every vector of the hostile corpus through the one sanitizer
(``agentdash.core.rendering.render_untrusted``), checked for what must hold of any output:

- only allowlisted elements and attributes; every ``a`` gets the project's ``rel``;
- every link is http, https, mailto or relative, read as a browser reads it (entities
  decoded, the whitespace and control characters a browser skips removed);
- the output is a fixed point of the sanitizer (sanitizing it again changes nothing: no
  markup appears on a second parse, the mutation-XSS pattern);
- no NUL, no lone surrogate; bounded size whatever the input's;
- template syntax reaches the reader as the same text.

The browser tests drive the same vectors through every view
(tests/agentdash/dashboard/browser/test_xss_corpus.py)."""

from __future__ import annotations

import html
import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import nh3
import pytest

from agentdash.core import rendering
from agentdash.core.rendering import render_untrusted
from tests.security.corpus import KINDS, Vector, vectors

# What the output may hold, written out here rather than read from the module: a wider
# allowlist there must fail here until someone looks at what it lets through.
INERT_TAGS = frozenset(
    {
        "a", "p", "br", "hr", "strong", "em", "code", "pre", "blockquote",
        "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6",
        "table", "thead", "tbody", "tr", "th", "td", "del", "span",
    }
)  # fmt: skip
INERT_ATTRIBUTES = {"a": {"href", "title", "rel"}, "th": {"align"}, "td": {"align"}}
LINK_SCHEMES = {"http", "https", "mailto"}
MAX_OUTPUT_CHARS = 1_000_000  # the input is cut at 150,000 characters; escaping can triple it
# What a browser drops from a URL before reading its scheme: leading C0 controls and spaces,
# and tabs and newlines anywhere (the URL standard).
URL_SKIPPED = re.compile(r"[\t\n\r]")
URL_LEADING = re.compile(r"^[\x00-\x20]+")
SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.\-]*):")


class Elements(HTMLParser):
    """The elements and attributes of an HTML fragment, and its text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, attrs))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, attrs))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parsed(fragment: str) -> Elements:
    parser = Elements()
    parser.feed(fragment)
    parser.close()
    return parser


def link_scheme(href: str) -> str | None:
    """The scheme a browser would see in ``href`` (an attribute value, entities decoded), or
    None for a relative URL."""
    url = URL_LEADING.sub("", URL_SKIPPED.sub("", href))
    found = SCHEME.match(url)
    return found.group(1).lower() if found else None


def test_the_corpus_is_ours_and_broad() -> None:
    every = vectors()
    assert len(every) >= 150
    assert len({v.id for v in every}) == len(every), "vector ids are unique"
    counts = Counter(v.kind for v in every)
    assert set(counts) == set(KINDS), counts
    assert all(counts[kind] >= 8 for kind in KINDS), counts
    assert max(len(v.text) for v in every) >= 2_000_000  # megabytes


@pytest.mark.parametrize("vector", vectors(), ids=lambda v: f"{v.kind}-{v.id}")
def test_the_sanitized_output_is_inert(vector: Vector) -> None:
    out = render_untrusted(vector.text)
    where = f"{vector.id}: {vector.short()!r} -> {out[:300]!r}"
    assert len(out) <= MAX_OUTPUT_CHARS, where
    assert "\x00" not in out and not any(0xD800 <= ord(c) <= 0xDFFF for c in out), where

    for tag, attrs in parsed(out).found:
        assert tag in INERT_TAGS, f"<{tag}> in {where}"
        allowed = INERT_ATTRIBUTES.get(tag, set())
        names = [name for name, _ in attrs]
        assert set(names) <= allowed, f"<{tag} {names}> in {where}"
        values = dict(attrs)
        if tag == "a":
            assert values.get("rel") == rendering.LINK_REL, where
            href = values.get("href")
            if href is not None:
                scheme = link_scheme(href)
                assert scheme is None or scheme in LINK_SCHEMES, where

    again = nh3.clean(
        out,
        tags=set(rendering.ALLOWED_TAGS),
        attributes=rendering.ALLOWED_ATTRIBUTES,
        url_schemes=set(rendering.ALLOWED_URL_SCHEMES),
        link_rel=rendering.LINK_REL,
        strip_comments=True,
    )
    assert again == out, f"not a fixed point: {where}"


TEMPLATE_MARKS = ("{{", "}}", "{%", "%}", "${", "#{", "<%", "[[", "{#")


@pytest.mark.parametrize(
    "vector", [v for v in vectors() if v.kind == "template"], ids=lambda v: v.id
)
def test_template_syntax_is_shown_as_written(vector: Vector) -> None:
    text = html.unescape("".join(parsed(render_untrusted(vector.text)).text))
    for mark in TEMPLATE_MARKS:
        assert text.count(mark) >= vector.text.count(mark), (mark, vector.id, text)


def test_the_readme_counts_the_corpus() -> None:
    """README's security section says how many vectors of each kind there are."""
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    said = re.search(r"`tests/security/xss_corpus\.json`, (\d+) strings", readme)
    assert said is not None and int(said.group(1)) == len(vectors()), said
    section = readme[said.start() : said.start() + 1200]
    shown = sorted(int(n) for n in re.findall(r"\((\d+)\)", section))
    assert shown == sorted(Counter(v.kind for v in vectors()).values()), shown
