"""Each demo agent, chatted with through the page on the offline model (no API key): the
answers a person reads, each saying it comes from the offline model.

``AGENTDASH_SCREENSHOTS=<dir>`` saves a screenshot of each conversation there.
"""

from __future__ import annotations

import re

import pytest

from tests.agentdash.dashboard.browser.harness import Browser, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LIVE_TIMEOUT = 30_000  # ms: a run on the offline model takes well under a second
ANSWERS = "#messages .msg-agent:not(.streaming) .msg-body.md"


def ask(browser: Browser, text: str) -> None:
    """Send ``text``: on a new chat's page it starts the session (whose page opens), on a
    session's page it goes over the live connection."""
    page = browser.page
    if page.locator("#new-chat-form").count():
        with page.expect_navigation(url=re.compile(r"/sessions/[^/]+/$")):
            page.fill("#composer-text", text)
            page.press("#composer-text", "Enter")
        page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
        return
    page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
    page.fill("#composer-text", text)
    page.press("#composer-text", "Enter")


def answer_to(browser: Browser, text: str, containing: str) -> str:
    """Ask ``text``; the text of the answer that contains ``containing``, once the run ended."""
    page = browser.page
    before = page.locator(ANSWERS).count()
    ask(browser, text)
    answer = page.locator(ANSWERS, has_text=containing).last
    answer.wait_for(timeout=LIVE_TIMEOUT)
    page.locator("#span-tree .span[data-state='running']").first.wait_for(
        state="detached", timeout=LIVE_TIMEOUT
    )
    assert page.locator(ANSWERS).count() > before
    shown: str = answer.inner_text()
    assert shown.startswith("Offline model: "), shown
    assert shown.count("Offline model") == 1, shown
    return shown


def test_the_capital_agent_answers_and_follows_up(browser: Browser) -> None:
    browser.log_in("alice")
    browser.new_chat("capital_agent")
    paris = answer_to(browser, "What is the capital of France?", "Paris")
    assert 'get_capital_city(country="France")' in paris
    assert paris.endswith("(checked by after_model)")
    # The call is shown as code, the words of the user as text.
    assert browser.page.locator(f"{ANSWERS} code", has_text="get_capital_city").count() == 1
    tokyo = answer_to(browser, "And Japan?", "Tokyo")
    assert 'get_capital_city(country="Japan")' in tokyo
    screenshot(browser, "demo-capital.png")
    browser.console.assert_clean()


def test_the_support_desk_transfers_to_billing_and_tech(browser: Browser) -> None:
    browser.log_in("alice")
    browser.new_chat("support_desk")
    charged = answer_to(browser, "I was charged twice this month", "pre-authorisation")
    assert "billing_policy(" in charged
    invoice = answer_to(browser, "And invoice INV-1002?", "overdue")
    assert "75.50 EUR" in invoice
    login = answer_to(browser, "Also, I cannot log in after a password change", "sign out")
    assert "search_known_issues(" in login
    # Who answered: the chat names the agents the desk handed over to.
    messages = browser.page.locator("#messages").inner_text()
    assert "billing_agent" in messages and "tech_agent" in messages
    screenshot(browser, "demo-support-desk.png")
    browser.console.assert_clean()


def test_the_data_agent_answers_in_english_and_refuses_what_the_policy_forbids(
    browser: Browser,
) -> None:
    browser.log_in("alice")
    browser.new_chat("data_agent")
    # run_query acts as alice: her shop holds her one customer, not Bob's or Chiara's.
    count = answer_to(browser, "How many customers do we have?", "COUNT(*) = 1")
    assert 'run_query(sql="SELECT COUNT(*) FROM customers")' in count
    answer_to(browser, "List customer names and cities", "Alice Martin")
    table = browser.page.locator(f"{ANSWERS} table").last
    assert table.locator("th").all_inner_texts() == ["name", "city"]
    assert table.locator("tbody tr").count() == 1
    assert table.locator("td").all_inner_texts()[:2] == ["Alice Martin", "Lyon"]
    refused = answer_to(browser, "delete all customers", "only SELECT")
    assert "this one starts with DELETE" in refused
    screenshot(browser, "demo-data-agent.png")
    browser.console.assert_clean()


def test_the_analyst_runs_python_in_the_sandbox_and_its_span_says_how(browser: Browser) -> None:
    browser.log_in("alice")
    browser.new_chat("analyst")
    answer = answer_to(browser, "What is the median of 3, 1, 4, 1, 5, 9 and 2?", "median: 3")
    assert "run_python(" in answer
    page = browser.page
    row = page.locator("#span-tree .span[data-kind='tool']").last
    assert "run_python" in row.inner_text()
    row.locator(":scope > .span-row").click()
    pane = page.locator("#span-detail")
    pane.locator('table[aria-label="attributes"]').wait_for(state="attached", timeout=LIVE_TIMEOUT)
    section = pane.locator("details.raw-attrs")
    if section.count() and section.get_attribute("open") is None:
        section.locator("summary").click()
    raw = pane.locator('table[aria-label="attributes"]').inner_text()
    assert "agentdash.code.exit_code" in raw and "agentdash.code.sandbox" in raw
    assert "bubblewrap" in raw
    screenshot(browser, "demo-analyst.png")
    browser.console.assert_clean()
