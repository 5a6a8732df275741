"""Guardrail decisions on the session page, in a real browser (see conftest.py): a span a
guardrail blocked, redacted or found unsafe carries a badge saying so in its timeline row
(any kind of span; "allowed" shows nothing), typing the decision finds it, and its details
pane has a Guardrail section (decision, guardrail, policy, reason — the reason as text, never
markup); a model call shows the safety settings it was sent with. Both themes keep WCAG AA
contrast (test_themes.py's check) with the badges and the section shown.

The session is made through the app's services (``spans_store``) in the server's database.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.agentdash.dashboard.browser.harness import (
    POLL_MS,
    Browser,
    LiveServer,
    details_drawn,
    screenshot,
)
from tests.agentdash.live_harness import manage

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TIMEOUT = 30_000  # ms
CONTRAST_JS = (Path(__file__).parent / "contrast.js").read_text(encoding="utf-8")
HOSTILE = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script> a card number'
TRACE = "5b8efff798038103d269b633813fc60c"
ROOT, AGENT, BLOCKED, ALLOWED, MODEL = (f"{i:016x}" for i in (1, 2, 3, 4, 5))
SPANS = 5

MAKE_SESSION = """
from django.contrib.auth.models import User
from agentdash.agent_sessions.services import session_create
from agentdash.spans.services import spans_store
from agentdash.spans.span_version import SpanVersion

alice = User.objects.get(username="alice")
session = session_create(app_name="capital_agent", user_id=str(alice.pk), owner=alice,
                         session_id={session_id!r}, title="Guardrail decisions")

def span(span_id, parent, name, start, attributes):
    return SpanVersion(trace_id={trace!r}, span_id=span_id, parent_span_id=parent, name=name,
                       start_time=start, end_time=start + 1_000_000, session_id=session.id,
                       attributes=attributes)

t = 1_700_000_000_000_000_000
spans_store(versions=[
    span({root!r}, "", "invocation", t, {{"agentdash.span.kind": "invocation"}}),
    span({agent!r}, {root!r}, "invoke_agent capital_agent", t + 1,
         {{"agentdash.span.kind": "agent", "gen_ai.agent.name": "capital_agent"}}),
    span({blocked!r}, {agent!r}, "callback before_model", t + 2, {{
        "agentdash.span.kind": "callback",
        "agentdash.callback.name": "pii_screen",
        "agentdash.callback.hook": "before_model",
        "agentdash.callback.outcome": "overridden",
        "agentdash.guardrail.name": "pii_screen",
        "agentdash.guardrail.decision": "blocked",
        "agentdash.guardrail.reason": {hostile!r},
        "agentdash.guardrail.policy": "pii@3",
    }}),
    span({allowed!r}, {agent!r}, "callback before_tool", t + 3, {{
        "agentdash.span.kind": "callback",
        "agentdash.callback.name": "tool_allowlist",
        "agentdash.callback.hook": "before_tool",
        "agentdash.callback.outcome": "passed",
        "agentdash.guardrail.name": "tool_allowlist",
        "agentdash.guardrail.decision": "allowed",
    }}),
    span({model!r}, {agent!r}, "generate_content gemini-2.5-flash", t + 4, {{
        "agentdash.span.kind": "model",
        "gen_ai.request.model": "gemini-2.5-flash",
        "agentdash.guardrail.name": "provider_safety",
        "agentdash.guardrail.decision": "unsafe",
        "agentdash.guardrail.reason": "finish reason SAFETY",
        "agentdash.model.safety_settings": (
            '[{{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_MEDIUM_AND_ABOVE"}},'
            ' {{"category": "HARM_CATEGORY_HATE_SPEECH", "threshold": "BLOCK_ONLY_HIGH"}}]'
        ),
    }}),
])
"""


@pytest.fixture(scope="module")
def session_path(agentdash_server: LiveServer) -> str:
    """alice's session of five spans: a callback blocked (with a hostile reason), one allowed,
    a model call found unsafe, under an agent and an invocation."""
    session_id = f"guardrails-{uuid.uuid4().hex[:12]}"
    code = MAKE_SESSION.format(
        session_id=session_id, trace=TRACE, root=ROOT, agent=AGENT, blocked=BLOCKED,
        allowed=ALLOWED, model=MODEL, hostile=HOSTILE,
    )  # fmt: skip
    manage(agentdash_server.env, "shell", "-c", code)
    return f"/sessions/{session_id}/"


def row(browser: Browser, span_id: str) -> Any:
    return browser.page.locator(f'#span-tree .span[data-span-id="{span_id}"]')


def badges(browser: Browser, span_id: str) -> list[dict[str, str]]:
    """The row's meta badges shown: class and text."""
    found: list[dict[str, str]] = row(browser, span_id).evaluate(
        """(row) => [...row.querySelectorAll(".span-meta > *")]
          .filter((part) => !part.hidden)
          .map((part) => ({ cls: part.className, text: part.textContent }))"""
    )
    return found


def open_span(browser: Browser, span_id: str) -> Any:
    """Click the span's row; the pane, once its Guardrail section (or view) is drawn."""
    row(browser, span_id).locator(":scope > .span-row").click()
    return details_drawn(browser, span_id, timeout=TIMEOUT)


def contrast_failures(browser: Browser) -> list[str]:
    found: dict[str, Any] = browser.page.evaluate(CONTRAST_JS)
    assert found["checked"] > 10
    return [
        f"{f['what']} {f['text']!r}: {f['ratio']} < {f['needs']} ({f['fg']} on {f['bg']})"
        for f in found["failures"]
    ]


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_decisions_show_on_rows_are_found_and_explained_in_the_pane(
    browser: Browser, session_path: str, theme: str
) -> None:
    browser.page.context.add_cookies(
        [{"name": "agentdash_theme", "value": theme, "url": browser.server.url}]
    )
    browser.log_in("alice")
    page = browser.page
    browser.goto(session_path)
    page.wait_for_function(
        """(total) => {
          const tree = document.querySelector("#span-tree");
          return tree && tree.dataset.complete === "true" && Number(tree.dataset.spans) === total;
        }""",
        arg=SPANS,
        timeout=TIMEOUT,
        polling=POLL_MS,
    )

    # The rows: a badge for blocked (a callback) and unsafe (a model call), none for allowed.
    # the decision takes the outcome's place ("overridden" says less)
    assert badges(browser, BLOCKED) == [
        {"cls": "decision decision-blocked", "text": "blocked"},
        {"cls": "tag", "text": "before_model"},
    ]
    assert {"cls": "decision decision-unsafe", "text": "unsafe"} in badges(browser, MODEL)
    assert not [b for b in badges(browser, ALLOWED) if "decision" in b["cls"]]
    assert not [b for b in badges(browser, AGENT) if "decision" in b["cls"]]

    # Typing the decision finds the span it was made on, and only that one.
    page.fill("#find-text", "blocked")
    page.wait_for_selector(f'#span-tree [data-match="hit"][data-span-id="{BLOCKED}"]')
    hits = page.locator('#span-tree .span[data-match="hit"]:not([hidden])')
    assert [hits.nth(i).get_attribute("data-span-id") for i in range(hits.count())] == [BLOCKED]
    page.locator("#span-find button[type=reset]").click()
    page.wait_for_function(
        "() => document.querySelector('#span-tree').dataset.matches === ''", polling=POLL_MS
    )

    # The pane: what the guardrail decided, and why — the hostile reason as text.
    pane = open_span(browser, BLOCKED)
    section = pane.locator("section[aria-label='Guardrail']")
    assert section.get_attribute("data-decision") == "blocked"
    facts = {
        name: section.locator(f'.facts [data-fact="{name}"] dd').inner_text()
        for name in ("decision", "guardrail", "policy")
    }
    assert facts == {"decision": "blocked", "guardrail": "pii_screen", "policy": "pii@3"}
    assert section.locator(".value-text").inner_text() == HOSTILE
    assert page.locator("#span-detail img, #span-detail script").count() == 0
    assert page.evaluate("window.__xss") is None
    # The callback's own view is still there, under it.
    assert pane.locator('.facts [data-fact="outcome"] dd').first.inner_text() == "overridden"
    page.mouse.move(0, 0)  # no hover state in the check
    failures = contrast_failures(browser)
    screenshot(browser, f"guardrail-{theme}-blocked.png")

    # A model call: its decision, and the safety settings it was sent with.
    pane = open_span(browser, MODEL)
    section = pane.locator("section[aria-label='Guardrail']")
    assert section.locator('.facts [data-fact="decision"] dd').inner_text() == "unsafe"
    assert section.locator(".value-text").inner_text() == "finish reason SAFETY"
    table = pane.locator("section[aria-label='Safety settings'] table.kv")
    cells = table.locator("tr").evaluate_all(
        "rows => rows.map((r) => [...r.querySelectorAll('th, td')].map((c) => c.textContent))"
    )
    assert cells == [
        ["HARM_CATEGORY_HARASSMENT", "BLOCK_MEDIUM_AND_ABOVE"],
        ["HARM_CATEGORY_HATE_SPEECH", "BLOCK_ONLY_HIGH"],
    ]

    # An allowed decision is said in the pane (not on the row).
    pane = open_span(browser, ALLOWED)
    allowed = pane.locator("section[aria-label='Guardrail'] .facts [data-fact='decision'] dd")
    assert allowed.inner_text() == "allowed"
    assert not failures, f"{theme} theme below WCAG AA:\n  " + "\n  ".join(failures)
    browser.console.assert_clean()
