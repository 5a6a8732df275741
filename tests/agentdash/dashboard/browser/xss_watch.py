"""A page watched for script execution and requests that leave the test server, for the
hostile-corpus browser tests (test_xss_corpus.py).

What is counted, per surface:

- **trap** — a call of ``xss(...)``, the global function every vector tries to call (defined
  before any page script, in every frame);
- **csp** — ``securitypolicyviolation`` events: something the sanitizer let through and only
  the Content-Security-Policy stopped (an inline handler, a script, a remote image or style);
- **dialog** — ``alert``/``confirm``/``prompt``/``beforeunload`` dialogs (dismissed);
- **request** — any request for a URL outside the test server (never sent: the browser
  sends every other host's requests to a proxy that is not there, harness.CHROMIUM_ARGS);
- **popup** — a new window or tab;
- **dom** — what the page holds after it drew everything: an ``on*`` attribute anywhere, a
  ``javascript:``/``data:``/``vbscript:`` URL in any URL-taking attribute, an embedding
  element (iframe, object, embed, frame, base, portal), a script from another origin or
  inline without the page's nonce, an image (or SVG use/image) not served by the test
  server's /static/, a style, link or meta element in the body, the SVG and MathML elements
  that run something (foreignObject, animate, set, handler, maction, annotation-xml), and
  any element outside the sanitizer's allowlist inside server-sanitized HTML (``.md``).

Playwright's ``evaluate`` runs over the DevTools protocol, so the audit is not subject to the
page's CSP; the trap's reports go through an exposed binding, which survives navigations.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

TRAP_SCRIPT = """
(() => {
  const report = (what) => {
    try { window.__xssReport(String(what).slice(0, 300)); } catch (e) { /* no binding yet */ }
  };
  const trap = (...args) => report(`xss(${args.map(String).join(", ")}) in ${location.href}`);
  Object.defineProperty(window, "xss", { value: trap, writable: false, configurable: false });
  document.addEventListener("securitypolicyviolation", (e) => {
    report(`csp ${e.violatedDirective} blocked ${e.blockedURI || "inline"}`
      + ` (${(e.sample || "").slice(0, 80)}) in ${e.documentURI}`);
  }, true);
})();
"""

# The sanitizer's allowlist (agentdash/core/rendering.py), as the audit reads it.
ALLOWED_IN_MARKDOWN = (
    "a p br hr strong em code pre blockquote ul ol li h1 h2 h3 h4 h5 h6 "
    "table thead tbody tr th td del span"
)

AUDIT_SCRIPT = """
(allowedInMarkdown) => {
  const found = [];
  const allowed = new Set(allowedInMarkdown.split(" "));
  const urlAttrs = new Set(["href", "src", "action", "formaction", "xlink:href", "data",
    "poster", "background", "srcset", "ping", "to", "values", "from", "by"]);
  const scriptUrl = /^[\\u0000-\\u0020]*(javascript|data|vbscript):/i;
  const url = (text) => {
    try { return new URL(text, location.href); } catch (e) { return null; }
  };
  const sameOrigin = (text) => url(text)?.origin === location.origin;
  const ownStatic = (text) => sameOrigin(text) && url(text).pathname.startsWith("/static/");
  const name = (el) => `<${el.localName}${el.id ? "#" + el.id : ""}>`;
  for (const el of document.querySelectorAll("*")) {
    for (const attr of el.attributes) {
      const n = attr.name.toLowerCase();
      if (n.startsWith("on")) found.push(`${name(el)} has ${n}=${attr.value.slice(0, 60)}`);
      if (urlAttrs.has(n) && scriptUrl.test(attr.value.replace(/[\\t\\n\\r]/g, ""))) {
        found.push(`${name(el)} ${n}=${attr.value.slice(0, 60)}`);
      }
    }
    const tag = el.localName;
    if (["iframe", "frame", "object", "embed", "base", "portal", "applet"].includes(tag)) {
      found.push(`${name(el)} element`);
    }
    // SVG and MathML parts that run or load something; the admin's icons use its own files.
    const lower = tag.toLowerCase();
    if (["foreignobject", "animate", "set", "handler", "maction", "annotation-xml"]
      .includes(lower)) {
      found.push(`${name(el)} element`);
    }
    if (["use", "image", "feimage"].includes(lower)) {
      const href = el.getAttribute("href") || el.getAttribute("xlink:href") || "";
      const local = href.startsWith("#") || ownStatic(href);  // this page's, or our file's
      if (!local) found.push(`${name(el)} href=${href.slice(0, 60)}`);
    }
    if (tag === "img" && !ownStatic(el.getAttribute("src") || "")) found.push(`${name(el)} src`);
    if (tag === "script") {
      const json = el.type === "application/json";
      const ours = el.src ? sameOrigin(el.src) : Boolean(el.nonce);
      if (!json && !ours) found.push(`${name(el)} not ours: ${el.outerHTML.slice(0, 80)}`);
    }
    if (["style", "link", "meta"].includes(tag) && el.closest("body")) {
      found.push(`${name(el)} in the body`);
    }
  }
  for (const body of document.querySelectorAll(".md")) {
    for (const el of body.querySelectorAll("*")) {
      if (!allowed.has(el.localName)) found.push(`${name(el)} in sanitized HTML`);
    }
  }
  return found;
}
"""

KINDS = ("trap", "csp", "dialog", "request", "popup", "dom", "page error")


@dataclass
class XssWatch:
    """What one browser context did that it must not, as lines per kind (see the module
    docstring). :meth:`check` audits the page and fails with every count when any is
    non-zero; :meth:`clear` starts the next surface."""

    local: str  # the test server's origin: http://127.0.0.1:<port>
    seen: dict[str, list[str]] = field(default_factory=lambda: {kind: [] for kind in KINDS})
    failed: list[str] = field(default_factory=list)  # outside requests that failed (all must)

    def attach(self, context: Any, page: Any) -> None:
        context.expose_binding("__xssReport", self._reported)
        context.add_init_script(TRAP_SCRIPT)
        context.on("request", self._request)
        context.on("requestfailed", self._failed)
        context.on("page", lambda popup: self.add("popup", popup.url or "a new page"))
        page.on("dialog", self._dialog)
        page.on("pageerror", lambda error: self.add("page error", str(error)))

    def add(self, kind: str, line: str) -> None:
        self.seen[kind].append(line[:300])

    def counts(self) -> dict[str, int]:
        return {kind: len(lines) for kind, lines in self.seen.items()}

    def clear(self) -> None:
        for lines in self.seen.values():
            lines.clear()

    def audit(self, page: Any) -> list[str]:
        found: list[str] = page.evaluate(AUDIT_SCRIPT, ALLOWED_IN_MARKDOWN)
        return found

    def check(self, page: Any, surface: str) -> None:
        """Audit ``page`` now, then fail naming ``surface`` if anything was counted."""
        for line in self.audit(page):
            self.add("dom", line)
        counts = self.counts()
        if any(counts.values()):
            details = [
                f"  {kind}: {line}" for kind, lines in self.seen.items() for line in lines[:8]
            ]
            raise AssertionError(
                f"{surface}: script executions and outside requests must be 0 — counts "
                + ", ".join(f"{kind} {n}" for kind, n in counts.items())
                + "\n"
                + "\n".join(details)
            )

    # ── listeners ──────────────────────────────────────────────────────────────────────
    def _reported(self, source: Any, what: str) -> None:
        self.add("csp" if what.startswith("csp ") else "trap", what)

    def _leaves(self, url: str) -> bool:
        return not (url.startswith(self.local + "/") or url == self.local)

    def _request(self, request: Any) -> None:
        if self._leaves(request.url):
            self.add("request", f"{request.method} {request.url}")

    def _failed(self, request: Any) -> None:
        if self._leaves(request.url):
            self.failed.append(request.url)

    def _dialog(self, dialog: Any) -> None:
        self.add("dialog", f"{dialog.type}: {dialog.message}")
        dialog.dismiss()


def watched(context: Any, page: Any, local: str) -> XssWatch:
    """An :class:`XssWatch` attached to ``context`` and ``page`` (before any navigation the
    test makes: init scripts apply to documents loaded after them)."""
    watch = XssWatch(local=local)
    watch.attach(context, page)
    return watch
