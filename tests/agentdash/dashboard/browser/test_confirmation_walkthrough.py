"""The README's debugging walk-through, first part, in Chromium on the offline model: the
support desk asks before it reimburses an invoice; the page shows the waiting request in the chat
(hint, tool, arguments, payload) and on the paused tool's timeline row; the person lowers the
amount in the payload, approves, and the tool reimburses what they approved.

``AGENTDASH_SCREENSHOTS=<dir>`` saves the waiting card there (desktop and phone).
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from tests.agentdash.dashboard.browser.harness import Browser, screenshot
from tests.agentdash.dashboard.browser.test_demos_offline import ANSWERS, LIVE_TIMEOUT, ask

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CARD = "#confirmations .confirm-card"


def in_view(page: Any, selector: str) -> bool:
    """Whether the element is on the screen and the topmost thing at its centre."""
    found: bool = page.evaluate(
        """(selector) => {
          const node = document.querySelector(selector);
          const box = node.getBoundingClientRect();
          const x = box.left + box.width / 2, y = box.top + box.height / 2;
          if (x < 0 || y < 0 || x > innerWidth || y > innerHeight) return false;
          const top = document.elementFromPoint(x, y);
          return top === node || node.contains(top);
        }""",
        selector,
    )
    return found


def test_approve_a_payment_with_an_edited_payload(browser: Browser) -> None:
    page = browser.page
    browser.log_in("alice")
    browser.new_chat("support_desk")
    ask(browser, "Please reimburse invoice INV-1002")

    card = page.locator(CARD)
    card.wait_for(timeout=LIVE_TIMEOUT)
    assert card.locator(".confirm-hint").inner_text() == "Reimburse 75.50 EUR of INV-1002 to bob?"
    facts = card.locator(".confirm-facts").inner_text()
    assert "reimburse_invoice" in facts and "billing_agent" in facts and "INV-1002" in facts
    assert json.loads(card.locator(".confirm-payload").input_value()) == {
        "amount": 75.5,
        "currency": "EUR",
    }
    # The run is waiting, and the paused tool's row says so with a clock.
    page.wait_for_selector("#run-status[data-status='waiting']", timeout=LIVE_TIMEOUT)
    row = page.locator("#span-tree .span[data-name='execute_tool reimburse_invoice']").last
    row.locator(".outcome-waiting").wait_for(timeout=LIVE_TIMEOUT)
    assert row.locator(".outcome-waiting").inner_text().startswith("waiting")
    row.locator(":scope > .span-row").click()  # its details say it waits, not "ok"
    status = page.locator('#span-detail .facts [data-fact="status"] dd').first
    status.filter(has_text="waiting for a person's approval").wait_for(timeout=LIVE_TIMEOUT)
    screenshot(browser, "confirmation-waiting.png")
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    screenshot(browser, "confirmation-waiting-phone.png")
    page.set_viewport_size({"width": 1440, "height": 900})

    # Denying needs a reason; a payload that is not JSON is caught before it is sent.
    card.locator(".confirm-deny").click()
    assert "Say why" in card.locator(".confirm-problem").inner_text()
    card.locator(".confirm-payload").fill('{"amount": 40,')
    card.locator(".confirm-approve").click()
    assert "not JSON" in card.locator(".confirm-problem").inner_text()

    card.locator(".confirm-payload").fill('{"amount": 40, "currency": "EUR"}')
    assert card.locator(".confirm-approve").inner_text() == "Approve with edits"
    card.locator(".confirm-reason").fill("partial payment agreed on the phone")
    card.locator(".confirm-approve").click()

    refunded = page.locator(ANSWERS, has_text="reimbursed: 40.00 EUR").last
    refunded.wait_for(timeout=LIVE_TIMEOUT)
    page.locator(CARD).wait_for(state="detached", timeout=LIVE_TIMEOUT)
    assert page.locator("#confirmations").is_hidden()
    page.wait_for_selector("#run-status[data-status='succeeded']", timeout=LIVE_TIMEOUT)
    waiting = page.locator("#span-tree .outcome-waiting:visible")
    waiting.first.wait_for(state="detached", timeout=LIVE_TIMEOUT)
    browser.console.assert_clean()


def test_a_breakpoint_pauses_before_a_tool_and_resumes(browser: Browser) -> None:
    page = browser.page
    browser.log_in("operator")
    browser.new_chat("support_desk")
    ask(browser, "What is the status of invoice INV-1003?")
    page.locator(ANSWERS, has_text="INV-1003").last.wait_for(timeout=LIVE_TIMEOUT)
    session_path = page.url.removeprefix(browser.server.url)

    page.click("a.breakpoints-link")
    page.select_option("#bp-kind", "before_tool")
    page.fill("#bp-tool", "lookup_invoice")
    page.fill("#bp-reason", "check the invoice lookups")
    page.click(".breakpoint-form button[type=submit]")
    assert "now pause before tool lookup_invoice" in page.locator(".notices").inner_text()
    screenshot(browser, "breakpoints.png")

    browser.goto(session_path)
    ask(browser, "And invoice INV-1001?")
    card = page.locator(CARD)
    card.wait_for(timeout=LIVE_TIMEOUT)
    assert card.locator(".badge").inner_text() == "paused at a breakpoint"
    assert card.locator(".confirm-hint").inner_text() == "Breakpoint: before tool lookup_invoice"
    payload = json.loads(card.locator(".confirm-payload").input_value())
    assert payload["args"] == {"invoice_number": "INV-1001"}
    payload["args"]["invoice_number"] = "INV-1002"  # look at another invoice instead
    card.locator(".confirm-payload").fill(json.dumps(payload))
    assert card.locator(".confirm-approve").inner_text() == "Resume with edits"
    # The operator's narrow chat column at 1440×900: every decision is in view, uncovered.
    for button in (".confirm-approve", ".confirm-step", ".confirm-deny"):
        assert in_view(page, f"{CARD} {button}"), f"{button} is not in view"
    screenshot(browser, "breakpoint-paused.png")
    card.locator(".confirm-approve").click()
    page.locator(ANSWERS, has_text="INV-1002").last.wait_for(timeout=LIVE_TIMEOUT)
    page.locator(CARD).wait_for(state="detached", timeout=LIVE_TIMEOUT)
    browser.console.assert_clean()


def test_a_message_sent_while_a_run_waits_is_queued_and_answered_after_it(
    browser: Browser,
) -> None:
    """A session's runs take turns: what the person sends while a run waits for approval
    waits at the end of the chat, marked queued (after a reload too), and can be withdrawn;
    once the paused run is answered, the queued message is answered after it, in order."""
    page = browser.page
    browser.log_in("alice")
    browser.new_chat("support_desk")
    ask(browser, "Please reimburse invoice INV-1002")
    page.locator(CARD).wait_for(timeout=LIVE_TIMEOUT)
    page.wait_for_selector("#run-status[data-status='waiting']", timeout=LIVE_TIMEOUT)

    ask(browser, "What is the status of invoice INV-1003?")
    ask(browser, "And INV-1001?")
    queued = page.locator("#messages > .msg-user.queued")
    queued.nth(1).wait_for(timeout=LIVE_TIMEOUT)
    assert queued.first.locator(".msg-queue").inner_text().startswith("Queued")
    last = "document.querySelector('#messages').lastElementChild"
    assert "INV-1001" in page.evaluate(f"{last}.textContent")
    # The header tells the run that holds the turn, and what waits behind it.
    badge = page.locator("#run-status[data-status='waiting']")
    badge.filter(has_text="2 queued").wait_for(timeout=LIVE_TIMEOUT)
    screenshot(browser, "chat-queued.png")
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    screenshot(browser, "chat-queued-phone.png")
    page.set_viewport_size({"width": 1440, "height": 900})

    page.reload()  # the queued messages come back from their runs
    queued.nth(1).wait_for(timeout=LIVE_TIMEOUT)
    assert queued.count() == 2
    assert "INV-1003" in queued.first.inner_text() and "INV-1001" in queued.nth(1).inner_text()
    # The queued messages come from the snapshot, before the socket is back: a withdrawal
    # goes over the socket, so wait for it.
    page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)

    queued.nth(1).locator(".msg-queue button").click()  # withdrawn before it ran
    page.locator("#messages > .msg-user.withdrawn", has_text="INV-1001").wait_for(
        timeout=LIVE_TIMEOUT
    )
    assert queued.count() == 1

    card = page.locator(CARD)
    card.locator(".confirm-approve").click()
    page.locator(ANSWERS, has_text="reimbursed: 75.50 EUR").last.wait_for(timeout=LIVE_TIMEOUT)
    status = page.locator(ANSWERS, has_text="INV-1003")
    status.last.wait_for(timeout=LIVE_TIMEOUT)
    page.wait_for_selector("#run-status[data-status='succeeded']", timeout=LIVE_TIMEOUT)
    assert queued.count() == 0
    items = page.locator("#messages > li.msg").evaluate_all("nodes => nodes.map(n => n.innerText)")
    paid = next(i for i, t in enumerate(items) if "reimbursed: 75.50 EUR" in t)
    asked = next(i for i, t in enumerate(items) if "status of invoice INV-1003" in t)
    told = max(i for i, t in enumerate(items) if "INV-1003" in t)
    assert paid < asked < told, items
    assert not any("INV-1001" in t for t in items[told + 1 :] if "Withdrawn" not in t)
    browser.console.assert_clean()


def test_an_operator_cancels_a_waiting_run_with_a_reason_of_its_own(browser: Browser) -> None:
    """A cancel took its reason from the switches' shared Reason field without saying so:
    it has a field of its own, asked for when empty, and audited."""
    page = browser.page
    browser.log_in("operator")
    browser.new_chat("support_desk")
    ask(browser, "Please reimburse invoice INV-1002")
    page.locator(CARD).wait_for(timeout=LIVE_TIMEOUT)
    cancel = page.locator("#runs .run[data-status='waiting'] button", has_text="Cancel")
    cancel.wait_for(timeout=LIVE_TIMEOUT)
    page.fill("#control-reason", "a reason for the switches")
    cancel.click()
    assert "Say why first" in page.locator("#runs-status").inner_text()
    assert page.evaluate("document.activeElement.id") == "cancel-reason"
    page.fill("#cancel-reason", "the customer withdrew the claim")
    cancel.click()
    ended = page.locator("#runs .run[data-status='cancelled']")
    ended.wait_for(timeout=LIVE_TIMEOUT)
    assert "the customer withdrew the claim" in ended.locator(".run-error").inner_text()
    page.wait_for_selector("#run-status[data-status='cancelled']", timeout=LIVE_TIMEOUT)
    browser.console.assert_clean()


def test_the_waiting_page_says_since_when_in_the_readers_zone(abroad: Browser) -> None:
    """The server writes the time in UTC, saying so; the page shows it where it is read
    (Kolkata, UTC+05:30; Arabic with ASCII digits), the exact time with its zone on hover."""
    page = abroad.page
    abroad.log_in("operator")
    abroad.new_chat("support_desk")
    ask(abroad, "Please reimburse invoice INV-1002")
    page.wait_for_selector("#run-status[data-status='waiting']", timeout=LIVE_TIMEOUT)
    abroad.goto("/waiting/")
    since = page.locator("td[data-label='Since'] time").first
    since.wait_for()
    page.wait_for_function(
        "!document.querySelector(\"td[data-label='Since'] time\").textContent.includes('UTC')"
    )
    at = datetime.fromisoformat(since.get_attribute("datetime") or "")
    there = at.astimezone(ZoneInfo("Asia/Kolkata"))
    shown = since.inner_text()
    assert f"{there:%M:%S}" in shown and re.search(r"\d", shown), shown
    assert at.astimezone(UTC).strftime("%Y-%m-%d %H:%M") not in shown
    assert since.get_attribute("title")  # the exact time, with the zone
    screenshot(abroad, "waiting-abroad.png")
    page.set_viewport_size({"width": 390, "height": 844})
    screenshot(abroad, "waiting-abroad-phone.png")
    abroad.console.assert_clean()
