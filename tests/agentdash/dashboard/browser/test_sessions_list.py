"""The sessions list in a real browser (see conftest.py): New chat stores nothing until the
first message, which starts the session and titles it; search, filters and pages; renaming
in place and deleting with a confirmation; an operator's owner column; a phone's list that
does not scroll sideways; the top bar naming the user once.

The list's sessions are carol's and dave's, users of this module's own (other modules' users
chat on the same server); they are made through the app's services in the server's
database.
``AGENTDASH_SCREENSHOTS=<dir>`` saves screenshots there.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

import pytest

from tests.agentdash.dashboard.browser.harness import (
    POLL_MS,
    Browser,
    LiveServer,
    screenshot,
    session_generate,
)
from tests.agentdash.dashboard.browser.test_mobile_layout import assert_fits
from tests.agentdash.live_harness import manage

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LIVE_TIMEOUT = 30_000
OWNER = "carol"
PROBES = 60  # more than a page (50)
ROW = "tr.session-row"

# carol's first messages, by agent: each session asks one, with an order number (1000 + n).
QUESTIONS = {
    "capital_agent": ("What is the capital of France?", "And the capital of Japan?",
                      "Which city is the capital of Canada?"),
    "support_desk": ("I was charged twice this month", "Why does login fail after a password "
                     "change?", "Is invoice INV-1002 overdue?"),
    "data_agent": ("How many customers do we have?", "List customer names and cities",
                   "Which orders shipped last week?"),
}  # fmt: skip

MAKE_SESSIONS = """
import uuid
from django.contrib.auth.models import User
from agentdash.agent_sessions.services import session_create, session_first_message_record
from agentdash.runs.models import Run

def chat(owner, agent, text, status=None):
    session = session_create(app_name=agent, user_id=str(owner.pk), owner=owner)
    session_first_message_record(session_id=session.id, text=text)
    if status:
        Run.objects.create(session=session, agent_name=agent, status=status, message={{}},
                           invocation_id=f"e-{{uuid.uuid4().hex}}")

questions = {questions!r}
agents = list(questions)
owner = User.objects.create_user({owner!r}, password={password!r})
for n in range({count}):
    agent = agents[n % 3]
    text = f"{{questions[agent][n // 3 % 3]}} (order {{1000 + n}})"
    chat(owner, agent, text, "failed" if n % 7 == 3 else "succeeded")
chat(owner, "data_agent", "Plan a trip to Lisbon, please")
dave = User.objects.create_user("dave", password={password!r})
for text in ("Keep this one", "Notes to rename and delete"):
    chat(dave, "capital_agent", text)
"""


@pytest.fixture(scope="module")
def carols(agentdash_server: LiveServer) -> dict[str, Any]:
    """carol with PROBES sessions of the three demo agents (a run each, one in seven
    failed), one of the data agent without a run (a trip to Lisbon) and, newest, a big one
    (its spans, errors among them); dave with two sessions to rename and delete."""
    code = MAKE_SESSIONS.format(
        owner=OWNER, password=agentdash_server.password, count=PROBES, questions=QUESTIONS
    )
    manage(agentdash_server.env, "shell", "-c", code)
    return session_generate(
        agentdash_server, "spans", "--count", "1200", "--per-run", "400", "--owner", OWNER,
        "--failed", "1",
    )  # fmt: skip


def row_ids(browser: Browser) -> list[str]:
    ids: list[str] = browser.page.locator(ROW).evaluate_all(
        "rows => rows.map((r) => r.dataset.sessionId)"
    )
    return ids


def apply_filters(browser: Browser) -> None:
    with browser.page.expect_navigation():
        browser.page.click(".session-filters button[type=submit]")


def search(browser: Browser, text: str) -> None:
    page = browser.page
    page.fill(".session-filters input[name=q]", text)
    with page.expect_navigation():
        page.press(".session-filters input[name=q]", "Enter")


def test_new_chat_stores_nothing_until_the_first_message(browser: Browser) -> None:
    browser.log_in("bob")
    page = browser.page
    before = row_ids(browser)
    for _ in range(3):  # New chat, then away without a word: nothing is left behind
        browser.new_chat("capital_agent")
        assert page.locator("#composer-send").is_disabled()  # nothing to send yet
    browser.goto("/")
    assert row_ids(browser) == before

    browser.new_chat("capital_agent")
    question = "What is the capital of France?"
    page.fill("#composer-text", question)
    page.click("#composer-send")  # the button too, not only Enter
    page.wait_for_url(re.compile(r"/sessions/[^/]+/$"))
    path = page.url.removeprefix(browser.server.url)
    page.locator(".msg-agent .msg-body.md", has_text="Paris").first.wait_for(timeout=LIVE_TIMEOUT)
    assert page.locator(".msg-user .msg-body", has_text="France").count() == 1

    browser.goto("/")
    first = page.locator(ROW).first
    assert first.locator("a.session-title").get_attribute("href") == path
    assert first.locator("a.session-title").inner_text() == question
    assert first.locator(".session-agent").inner_text() == "capital_agent"
    assert first.locator(".run-status").inner_text() == "succeeded"
    # The exact time on hover: to the second, with the year and the zone.
    when = first.locator("time").first
    hover = when.get_attribute("title") or ""
    stamp = datetime.fromisoformat(when.get_attribute("datetime") or "")
    assert re.search(r"\d{1,2}:\d{2}:\d{2}", hover) and str(stamp.year) in hover, hover
    assert re.search(r"UTC|GMT|[+-]\d", hover), hover
    assert len(row_ids(browser)) == len(before) + 1
    browser.console.assert_clean()


def test_search_filters_and_pages(browser: Browser, carols: dict[str, Any]) -> None:
    browser.log_in(OWNER)
    page = browser.page
    ids = row_ids(browser)
    assert len(ids) == 50 and ids[0] == carols["session_id"]  # newest activity first
    big = page.locator(ROW).first
    assert big.locator(".span-count").inner_text() == "1,200"  # thousands separators
    assert int(big.locator(".error-count").inner_text()) > 0
    assert big.locator(".run-status").inner_text() in ("succeeded", "failed", "cancelled")
    when = big.locator("time").first
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT.+", when.get_attribute("datetime") or "")
    assert "UTC" not in when.inner_text()  # the reader's own zone, written by the page
    screenshot(browser, "sessions-list.png")

    with page.expect_navigation():
        page.click("a[rel=next]")
    rest = row_ids(browser)
    assert len(rest) == PROBES + 2 - 50 and not set(rest) & set(ids)
    assert page.locator("a[rel=next]").count() == 0
    with page.expect_navigation():
        page.click("a[rel=prev]")
    assert row_ids(browser) == ids

    search(browser, "lisbon")
    (lisbon,) = row_ids(browser)
    assert page.locator(ROW).first.locator(".session-agent").inner_text() == "data_agent"
    search(browser, lisbon[:10])  # the start of an id
    assert row_ids(browser) == [lisbon]
    search(browser, "ORDER 1007")  # any case; orders run from 1000 to 1059: one
    assert len(row_ids(browser)) == 1

    search(browser, "")
    page.select_option(".session-filters select[name=agent]", "data_agent")
    apply_filters(browser)
    agents = page.locator(f"{ROW} .session-agent").all_inner_texts()
    assert len(agents) == PROBES // 3 + 1 and set(agents) == {"data_agent"}
    page.select_option(".session-filters select[name=status]", "failed")
    apply_filters(browser)
    statuses = page.locator(f"{ROW} .run-status").all_inner_texts()
    assert statuses and set(statuses) == {"failed"}  # data_agent's, one in seven
    page.select_option(".session-filters select[name=status]", "none")
    apply_filters(browser)
    assert row_ids(browser) == [lisbon]
    page.check(".session-filters input[name=with_errors]")
    apply_filters(browser)
    assert row_ids(browser) == []
    assert "No sessions match" in page.locator(".empty-list").inner_text()
    with page.expect_navigation():
        page.click(".filter-clear")
    assert len(row_ids(browser)) == 50
    browser.console.assert_clean()


def test_rename_in_place_and_delete_with_a_confirmation(
    browser: Browser, carols: dict[str, Any]
) -> None:
    browser.log_in("dave")
    page = browser.page
    assert len(row_ids(browser)) == 2
    named = page.locator(ROW, has=page.locator("a.session-title", has_text="Notes to rename"))
    session_id = named.get_attribute("data-session-id")
    row = page.locator(f"{ROW}[data-session-id='{session_id}']")
    page.evaluate("() => { window.__samePage = true; }")

    row.locator(".rename-link").click()
    title = row.locator(".rename-form input[name=title]")
    assert title.is_visible() and title.input_value() == "Notes to rename and delete"
    assert not row.locator("a.session-title").is_visible()  # the form stands in its place
    title.fill("   ")
    title.press("Enter")
    error = row.locator(".rename-error")
    error.wait_for()
    assert error.inner_text() == "A title cannot be empty."
    # Chromium reports the refusal's 400 on the console: expected here, and only here.
    refused = [e for e in browser.console.errors if "status of 400" in e]
    assert len(refused) == 1
    browser.console.errors.remove(refused[0])

    hostile = 'Trip <img src=x onerror="window.__xss=1"> notes'
    title.fill(hostile)
    title.press("Enter")
    link = row.locator("a.session-title")
    row.locator("a.session-title", has_text="Trip").wait_for()
    assert link.inner_text() == hostile and row.locator("img").count() == 0
    assert page.evaluate("() => window.__samePage") is True  # renamed without a reload

    row.locator(".rename-link").click()
    row.locator(".rename-form input[name=title]").fill("Not kept")
    row.locator(".rename-form input[name=title]").press("Escape")
    assert link.inner_text() == hostile

    page.reload()
    assert page.locator(f"{ROW}[data-session-id='{session_id}'] a.session-title").inner_text() == (
        hostile
    )
    assert page.locator("img").count() == 0 and page.evaluate("() => window.__xss") is None

    with page.expect_navigation():
        page.locator(f"{ROW}[data-session-id='{session_id}'] .delete-link").click()
    assert page.locator("h1").inner_text() == "Delete this session?"
    assert hostile in page.locator(".delete-what").inner_text()
    with page.expect_navigation():
        page.click(".delete-form button[type=submit]")
    assert page.url == f"{browser.server.url}/"  # back where it was asked
    assert "Deleted “Trip" in page.locator(".notice").inner_text()
    assert page.locator(f"{ROW}[data-session-id='{session_id}']").count() == 0
    assert len(row_ids(browser)) == 1
    assert page.request.get(f"{browser.server.url}/sessions/{session_id}/").status == 404
    browser.console.assert_clean()


def test_an_operator_sees_owners_and_the_top_bar_names_them_once(
    browser: Browser, carols: dict[str, Any]
) -> None:
    browser.log_in("operator")
    page = browser.page
    assert page.locator(".topbar .who").inner_text() == "operator"  # not "operator · operator"
    assert page.locator("th", has_text="Owner").count() == 1
    page.fill(".session-filters input[name=owner]", OWNER)
    apply_filters(browser)
    owners = page.locator(f"{ROW} .session-owner").all_inner_texts()
    assert owners and set(owners) == {OWNER}
    assert page.locator(f"{ROW} .rename-link").count() == 0  # not theirs to rename
    assert page.locator(f"{ROW} .delete-link").count() == len(owners)  # an operator may delete
    browser.log_out()
    browser.log_in("alice")
    assert page.locator(".topbar .who").inner_text() == "alice"
    assert page.locator("th", has_text="Owner").count() == 0
    browser.console.assert_clean()


def test_the_list_fits_a_phone(phone: Browser, carols: dict[str, Any]) -> None:
    phone.log_in(OWNER)
    assert len(row_ids(phone)) == 50
    assert_fits(phone, "the sessions list")
    title = phone.page.locator(ROW).first.locator("a.session-title").bounding_box()
    assert title is not None and title["x"] + title["width"] <= 390
    screenshot(phone, "sessions-list-phone.png")
    phone.new_chat("capital_agent")
    assert_fits(phone, "the new-chat page")
    phone.console.assert_clean()


MAKE_ERINS = """
from django.contrib.auth.models import User
from agentdash.agent_sessions.services import session_create, session_first_message_record

erin = User.objects.create_user("erin", password={password!r})
for text in ("Erin's older question", "Erin's newer question"):
    session = session_create(app_name="capital_agent", user_id=str(erin.pk), owner=erin)
    session_first_message_record(session_id=session.id, text=text)
"""


def test_the_list_follows_its_sessions_without_a_reload(
    browser: Browser, agentdash_server: LiveServer
) -> None:
    """A session that changes elsewhere (another tab) moves to the top of the open list with
    its new status; a new session is counted in a notice whose link shows it."""
    manage(
        agentdash_server.env, "shell", "-c", MAKE_ERINS.format(password=agentdash_server.password)
    )
    browser.log_in("erin")
    page = browser.page
    page.wait_for_selector("#list-live[data-state='live']", timeout=LIVE_TIMEOUT)
    titles = page.locator(f"{ROW} a.session-title")
    assert titles.all_inner_texts() == ["Erin's newer question", "Erin's older question"]
    older = page.locator(ROW).nth(1)
    older_id, older_path = (
        older.get_attribute("data-session-id"),
        titles.nth(1).get_attribute("href"),
    )
    assert older.locator(".run-status").inner_text() == "no runs"

    other = page.context.new_page()  # another tab of the same reader
    other.goto(f"{agentdash_server.url}{older_path}")
    # As a person would, once the page says Live (Send is disabled until then; a message sent
    # before is refused as 'Not connected', and the test would wait for an answer forever).
    other.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
    other.fill("#composer-text", "What is the capital of Italy?")
    other.press("#composer-text", "Enter")
    other.locator(".msg-agent .msg-body.md", has_text="Rome").first.wait_for(timeout=LIVE_TIMEOUT)

    page.wait_for_function(
        """(id) => {
          const first = document.querySelector("tr.session-row");
          return first?.dataset.sessionId === id &&
            first.querySelector(".run-status").textContent === "succeeded";
        }""",
        arg=older_id,
        timeout=LIVE_TIMEOUT,
        polling=POLL_MS,
    )
    assert page.locator(f"{ROW} .span-count").first.inner_text() != "0"
    assert page.locator("#list-news").is_hidden()

    other.goto(f"{agentdash_server.url}/")
    other.click("form.new-chat button[data-agent='capital_agent']")
    other.wait_for_url(re.compile(r"/chat/"))
    other.fill("#composer-text", "And the capital of Spain?")
    with other.expect_navigation(url=re.compile(r"/sessions/[^/]+/$")):
        other.press("#composer-text", "Enter")
    news = page.locator("#list-news")
    news.wait_for(state="visible", timeout=LIVE_TIMEOUT)
    assert news.inner_text().startswith("1 more session has new activity")
    assert len(row_ids(browser)) == 2  # never a row under the reader's pointer by itself
    screenshot(browser, "sessions-list-live.png")
    with page.expect_navigation():
        news.locator("a").click()
    assert page.locator(f"{ROW} a.session-title").first.inner_text() == "And the capital of Spain?"
    other.close()
    browser.console.assert_clean()
