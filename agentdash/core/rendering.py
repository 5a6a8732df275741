"""The one place untrusted text becomes HTML.

Model and tool output is hostile. It is rendered once, when written: Markdown (raw HTML off)
→ HTML → nh3 with a strict allowlist. Links keep only http, https and mailto and get
``rel="noopener noreferrer nofollow"``; there are no images, no styles, no event handlers.

**Links** stay links (a model citing its sources is useful), but never hide where they go:
a link whose text is not its own address is followed by where it leads — ``(example.org ↗)``
for the web (the host: what a phishing link would have to show), the address for mail — and
its ``title`` says it opens another site. A link to anything else (``javascript:``,
``data:``…) is text, as the sanitizer leaves it.
A Markdown image is shown as its alt text (``[image]`` when it has none): the allowlist has
no ``img``, and an image the sanitizer dropped whole would leave its message blank. Input is
capped in size first; Markdown nested past :data:`MAX_NESTING` is shown as plain text (the
parser would silently drop what lies past its cap). Table cells keep their alignment as the
``align`` attribute (the parser's ``style`` would be stripped).
"""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

import nh3
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

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
IMAGE_WITHOUT_ALT = "[image]"
TOO_DEEP_NOTE = "<p><em>Nested too deeply to format: shown as plain text.</em></p>\n"

_markdown = MarkdownIt("js-default", {"html": False, "linkify": False, "typographer": False})
_markdown.options["maxNesting"] = MAX_NESTING


def _image_as_text(
    self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    # The alt text, escaped here like any text markdown-it renders; the URL is dropped: the
    # page loads no images (CSP img-src 'self'), and an untrusted URL is not worth a request.
    children = tokens[idx].children or []
    alt = self.renderInlineAsText(children, options, env).strip()
    return escapeHtml(alt or IMAGE_WITHOUT_ALT)


_markdown.add_render_rule("image", _image_as_text)

LEAVES = "↗"


def destination(href: str) -> str:
    """What a link to ``href`` is shown to lead to: the host of an http(s) address, the
    address of a mailto one; ``""`` for anything else (the sanitizer drops those)."""
    parsed = urlsplit(href.strip())
    scheme = parsed.scheme.lower()
    if scheme in ("http", "https") and parsed.hostname:
        return parsed.hostname
    if scheme == "mailto":
        return unquote(parsed.path)
    return ""


def _link_open(
    self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    href = str(token.attrGet("href") or "")
    if destination(href) and not token.attrGet("title"):
        mail = href.strip().lower().startswith("mailto:")
        token.attrSet(
            "title", f"Writes to {destination(href)}" if mail else f"Opens {href}, another site"
        )
    return self.renderToken(tokens, idx, options, env)


def _link_close(
    self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    depth, start = 0, idx
    while start > 0:  # the link's own open token (links do not nest, images inside may)
        start -= 1
        if tokens[start].type == "link_close":
            depth += 1
        elif tokens[start].type == "link_open":
            if depth == 0:
                break
            depth -= 1
    href = str(tokens[start].attrGet("href") or "")
    shown = destination(href)
    text = self.renderInlineAsText(tokens[start + 1 : idx], options, env).strip()
    closed = self.renderToken(tokens, idx, options, env)
    if not shown or text in (href, shown, f"mailto:{shown}"):
        return closed
    return f"{closed} <span>({escapeHtml(shown)} {LEAVES})</span>"


_markdown.add_render_rule("link_open", _link_open)
_markdown.add_render_rule("link_close", _link_close)


def _deepest(tokens: list[Token]) -> int:
    """The deepest nesting level among ``tokens`` and their inline children."""
    deepest = 0
    for token in tokens:
        deepest = max(deepest, token.level)
        if token.children:
            deepest = max(deepest, token.level + _deepest(token.children))
    return deepest


def _align_cells(tokens: list[Token]) -> None:
    """``style="text-align:x"`` on table cells → ``align="x"`` (the allowlist keeps that)."""
    for token in tokens:
        if token.type in ("th_open", "td_open"):
            style = str(token.attrs.pop("style", ""))
            if style.startswith("text-align:"):
                token.attrSet("align", style.removeprefix("text-align:"))


def render_untrusted(text: str) -> str:
    """Safe HTML for ``text`` (Markdown). Overlong input is cut and marked; NUL characters
    and lone surrogates become U+FFFD (the sanitizer, like the database, takes only UTF-8);
    Markdown nested too deeply to render whole is shown as plain text, with a note."""
    if len(text) > MAX_INPUT_CHARS:
        text = text[:MAX_INPUT_CHARS] + "\n\n…[truncated]"
    text, _ = text_storable(text)
    env: EnvType = {}
    tokens = _markdown.parse(text, env)
    if _deepest(tokens) >= MAX_NESTING - 1:  # the parser reached its cap and dropped the rest
        html = f"{TOO_DEEP_NOTE}<pre><code>{escapeHtml(text)}</code></pre>\n"
    else:
        _align_cells(tokens)
        html = _markdown.renderer.render(tokens, _markdown.options, env)
    return nh3.clean(
        html,
        tags=set(ALLOWED_TAGS),
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=set(ALLOWED_URL_SCHEMES),
        link_rel=LINK_REL,
        strip_comments=True,
    )
