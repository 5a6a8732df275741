"""The one place untrusted text becomes HTML.

Model and tool output is hostile. It is rendered once, when written: Markdown (raw HTML off)
→ HTML → nh3 with a strict allowlist. Links keep only http, https and mailto and get
``rel="noopener noreferrer nofollow"``; there are no images, no styles, no event handlers.
Input is capped in size and nesting before any of that.
"""

from __future__ import annotations

import nh3
from markdown_it import MarkdownIt

from agentdash.core.hygiene import text_storable

MAX_INPUT_CHARS = 150_000
MAX_NESTING = 20

ALLOWED_TAGS: frozenset[str] = frozenset(
    {
        "a", "p", "br", "hr", "strong", "em", "code", "pre", "blockquote",
        "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6",
        "table", "thead", "tbody", "tr", "th", "td", "del", "span",
    }
)  # fmt: skip
ALLOWED_ATTRIBUTES: dict[str, set[str]] = {"a": {"href", "title"}, "th": {"align"}, "td": {"align"}}
ALLOWED_URL_SCHEMES: frozenset[str] = frozenset({"http", "https", "mailto"})
LINK_REL = "noopener noreferrer nofollow"

_markdown = MarkdownIt("js-default", {"html": False, "linkify": False, "typographer": False})
_markdown.options["maxNesting"] = MAX_NESTING


def render_untrusted(text: str) -> str:
    """Safe HTML for ``text`` (Markdown). Overlong input is cut and marked; NUL characters
    and lone surrogates become U+FFFD (the sanitizer, like the database, takes only UTF-8)."""
    if len(text) > MAX_INPUT_CHARS:
        text = text[:MAX_INPUT_CHARS] + "\n\n…[truncated]"
    text, _ = text_storable(text)
    html = _markdown.render(text)
    return nh3.clean(
        html,
        tags=set(ALLOWED_TAGS),
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=set(ALLOWED_URL_SCHEMES),
        link_rel=LINK_REL,
        strip_comments=True,
    )
