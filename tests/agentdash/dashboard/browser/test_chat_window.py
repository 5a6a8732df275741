"""A long chat (1,600 events: 800 items, a third more than the window of 600; the window
does not depend on the length — a 10,000-event chat reads back the same, in more pages) in a
real browser: read back to its first message and down again with a bounded page (the chat
keeps a window of messages, dropping the farthest from the reader), each turn once and in
order; "Jump to the latest" (in a bar below the list while it is cut) and a message sent while
reading far back bring the latest again, with the answer."""

from __future__ import annotations

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

pytestmark = [pytest.mark.browser, pytest.mark.slow]

EVENTS = 1_600
LIVE_TIMEOUT = 60_000  # ms: bounds waits for what must happen; measures nothing
MAX_ITEMS = 600  # chat_window.js
PAGE_EVENTS = 50  # a page of events (docs/PROTOCOL.md): at most 50 items more than the window
NODES_MAX = 40_000  # the page's elements at most (a 10k-event chat once grew to 91,000)

# Scrolls the chat one way until it can go no further (nothing more to load that way),
# waiting for each page; the largest item and element counts seen, and the turns shown at
# every step (so a test can see that no turn is skipped or shown twice).
WALK = """
async ({ up, steps }) => {
  const list = document.querySelector("#messages");
  const sentinel = () => list.querySelector(up ? ".msg-older" : ".msg-newer");
  const more = () => { const s = sentinel(); return !!s && !s.hidden && s.isConnected; };
  const turns = () => [...list.querySelectorAll(".msg-agent .msg-body")]
    .flatMap((b) => [...b.textContent.matchAll(/\\(turn (\\d+)\\)/g)].map((m) => Number(m[1])));
  const settle = async () => {
    for (let i = 0; i < 400 && list.getAttribute("aria-busy") === "true"; i++) {
      await new Promise((done) => setTimeout(done, 25));
    }
  };
  let maxItems = 0, maxNodes = 0, walked = 0;
  const seen = [];
  for (; walked < steps && more(); walked++) {
    list.scrollTop = up ? 0 : list.scrollHeight;
    await new Promise((done) => requestAnimationFrame(() => setTimeout(done, 30)));
    await settle();
    maxItems = Math.max(maxItems, list.childElementCount);
    maxNodes = Math.max(maxNodes, document.getElementsByTagName("*").length);
    seen.push(turns());
  }
  return { maxItems, maxNodes, walked, more: more(), turns: turns(), seen };
}
"""


@pytest.fixture(scope="module")
def long_chat(agentdash_server: LiveServer) -> dict[str, Any]:
    return session_generate(agentdash_server, "events", "--count", str(EVENTS), "--owner", "alice")


def contiguous(turns: list[int]) -> bool:
    return turns == list(range(turns[0], turns[0] + len(turns))) if turns else True


def walk(browser: Browser, *, up: bool) -> dict[str, Any]:
    found: dict[str, Any] = browser.page.evaluate(
        WALK, {"up": up, "steps": 2 * EVENTS // PAGE_EVENTS}
    )
    assert not found["more"], f"still more to load after {found['walked']} pages"
    assert found["maxItems"] <= MAX_ITEMS + PAGE_EVENTS, found["maxItems"]
    assert found["maxNodes"] <= NODES_MAX, found["maxNodes"]
    for shown in found["seen"]:
        assert contiguous(shown), shown  # each turn once, in order, at every step
    return found


def open_latest(browser: Browser, long_chat: dict[str, Any]) -> int:
    """As alice, open the long chat and wait for its latest turn; that turn's number."""
    turns: int = long_chat["turns"]
    browser.log_in("alice")
    browser.goto(long_chat["path"])
    latest = browser.page.locator("#messages .msg-agent", has_text=f"(turn {turns})")
    latest.wait_for(timeout=LIVE_TIMEOUT)
    return turns


def test_a_long_chat_reads_back_to_its_first_message_and_down_again_in_a_bounded_page(
    browser: Browser, long_chat: dict[str, Any]
) -> None:
    turns = open_latest(browser, long_chat)
    page = browser.page

    back = walk(browser, up=True)
    assert back["turns"][0] == 1, back["turns"][:5]  # the first message, read back to
    assert page.locator("#messages .msg-user").first.inner_text().strip() != ""
    assert turns not in back["turns"]  # the newest were let go on the way
    assert page.locator("#messages .msg-newer").is_visible()
    assert page.locator(".chat-jump").is_visible()  # below the list while it is cut
    page.locator("#messages").evaluate("(list) => { list.scrollTop = list.scrollHeight; }")
    screenshot(browser, "chat-window-read-back.png")

    down = walk(browser, up=False)
    assert down["turns"][-1] == turns and 1 not in down["turns"]
    assert page.locator("#messages .msg-newer").count() == 0  # the latest again: not cut
    assert page.locator(".chat-jump").is_hidden()
    browser.console.assert_clean()


def test_jump_to_the_latest_and_a_message_sent_from_far_back(
    browser: Browser, long_chat: dict[str, Any]
) -> None:
    turns = open_latest(browser, long_chat)
    page = browser.page
    page.evaluate(WALK, {"up": True, "steps": 30})  # far enough back that the newest went
    newer = page.locator("#messages .msg-newer")
    newer.wait_for(state="visible", timeout=LIVE_TIMEOUT)

    # The bar below the list: it holds still while newer pages load (the line in the list
    # moves down with each page, and coming near it loads one).
    bar = page.locator(".chat-jump")
    assert bar.is_visible()
    bar.get_by_role("button", name="Jump to the latest").click()
    page.locator("#messages .msg-agent", has_text=f"(turn {turns})").wait_for(timeout=LIVE_TIMEOUT)
    assert newer.count() == 0
    assert bar.is_hidden()

    page.evaluate(WALK, {"up": True, "steps": 30})
    newer.wait_for(state="visible", timeout=LIVE_TIMEOUT)
    page.fill("#composer-text", "What is the capital of Japan?")
    page.press("#composer-text", "Enter")
    page.wait_for_function(  # the latest again: the question last, and its answer after it
        """(question) => {
          const list = document.querySelector("#messages");
          if (list.querySelector(".msg-newer")) return false;
          const asked = [...list.querySelectorAll(".msg-user .msg-body")].at(-1);
          if (!asked || asked.textContent.trim() !== question) return false;
          const bubble = asked.closest("li");
          for (let next = bubble.nextElementSibling; next; next = next.nextElementSibling) {
            if (next.matches(".msg-agent") && /Tokyo/.test(next.textContent)) return true;
          }
          return false;
        }""",
        arg="What is the capital of Japan?",
        timeout=LIVE_TIMEOUT,
        polling=POLL_MS,
    )
    texts = page.locator("#messages .msg-user .msg-body").all_inner_texts()
    assert texts[-1].strip() == "What is the capital of Japan?", texts[-3:]
    assert texts.count(texts[-1]) == 1  # shown once: the stored message replaced the sent one
    assert page.locator("#messages > li").count() <= MAX_ITEMS + PAGE_EVENTS
    browser.console.assert_clean()


def test_the_window_on_a_phone(phone: Browser, long_chat: dict[str, Any]) -> None:
    """Read back on a phone: the newer messages' line fits and its buttons are reachable."""
    turns = open_latest(phone, long_chat)
    page = phone.page
    page.evaluate(WALK, {"up": True, "steps": 30})
    newer = page.locator("#messages .msg-newer")
    newer.wait_for(state="visible", timeout=LIVE_TIMEOUT)
    assert_fits(phone, "the chat read back")
    jump = page.locator(".chat-jump").get_by_role("button", name="Jump to the latest")
    box = jump.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
    assert box["y"] + box["height"] <= 844  # in view, above the composer's bottom
    screenshot(phone, "chat-window-phone.png")
    jump.tap()
    page.locator("#messages .msg-agent", has_text=f"(turn {turns})").wait_for(timeout=LIVE_TIMEOUT)
    phone.console.assert_clean()
