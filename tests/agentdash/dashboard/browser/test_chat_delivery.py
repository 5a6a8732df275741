"""A chat message reaches its session once, whatever its socket does: sent on a socket that
closes before the server reads it, or before its answer comes back, it goes again on the
next socket with its client_id, and the server answers a message it has with its run; lost
on a socket that stays open, it goes again on that socket once no answer came for a while."""

from __future__ import annotations

import pytest

from tests.agentdash.dashboard.browser.harness import Browser, screenshot
from tests.agentdash.dashboard.browser.test_session_page import (
    LIVE_TIMEOUT,
    ask,
    first_answered,
    wait_for_answer,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# The page's sockets, made to lose one chat message the way a network does, once, when the
# page's session storage says how: "send" closes the socket instead of sending the message
# (the server never reads it); "answer" lets the server take it, then drops its answer and
# closes the socket; "silent" drops the message and keeps the socket open. Every chat.accepted
# the page is given is recorded, with the lost one's, and every socket the page opens counted.
LOSING_SOCKETS = """
(() => {
  const Real = window.WebSocket;
  window.acceptedRuns = [];
  window.lostRun = null;
  window.socketsOpened = 0;
  window.WebSocket = class extends Real {
    constructor(url, protocols) {
      super(url, protocols);
      window.socketsOpened += 1;
      this.addEventListener("message", (event) => {
        const message = JSON.parse(event.data);
        if (message.type !== "chat.accepted") return;
        if (sessionStorage.getItem("lose") === "answer") {
          sessionStorage.removeItem("lose");
          window.lostRun = message.run_id;
          event.stopImmediatePropagation();
          this.close();
          return;
        }
        window.acceptedRuns.push(message.run_id);
      });
    }
    send(data) {
      const lose = sessionStorage.getItem("lose");
      if ((lose === "send" || lose === "silent") && JSON.parse(data).type === "chat.send") {
        sessionStorage.removeItem("lose");
        if (lose === "send") this.close();
        return;
      }
      super.send(data);
    }
  };
})();
"""


# Each way of losing a message once, each screen size once (the browser tests are one unit of
# CI's critical path: tests/conftest.py).
@pytest.mark.parametrize(
    ("size", "lost"), [("browser", "send"), ("phone", "answer"), ("browser", "silent")]
)
def test_a_message_whose_socket_closed_is_sent_again_and_stored_once(
    size: str, lost: str, request: pytest.FixtureRequest
) -> None:
    browser: Browser = request.getfixturevalue(size)
    page = browser.page
    first_answered(browser, LOSING_SOCKETS)

    page.evaluate("(how) => sessionStorage.setItem('lose', how)", lost)
    sockets = page.evaluate("window.socketsOpened")
    ask(browser, "And the capital of Spain?")
    wait_for_answer(browser, "Madrid")  # the socket came back and the message went again
    page.wait_for_function("window.acceptedRuns.length >= 1", timeout=LIVE_TIMEOUT)
    page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
    if lost == "silent":  # sent again on the same socket, after a wait for its answer
        assert page.evaluate("window.socketsOpened") == sockets
    if lost == "answer":  # the server had queued it: the second send is answered with that run
        assert page.evaluate("window.acceptedRuns") == [page.evaluate("window.lostRun")]
    assert page.locator(".msg-user .msg-body", has_text="Spain").count() == 1
    assert page.locator(".msg-agent .msg-body.md", has_text="Madrid").count() == 1
    assert page.locator("#messages .msg-error").count() == 0

    page.reload()  # what was stored: one message, one answer
    page.locator(".msg-agent .msg-body.md", has_text="Madrid").wait_for(timeout=LIVE_TIMEOUT)
    assert page.locator(".msg-user .msg-body", has_text="Spain").count() == 1
    assert page.locator(".msg-agent .msg-body.md", has_text="Madrid").count() == 1
    screenshot(browser, f"session-message-sent-again-{lost}-{size}.png")
    browser.console.assert_clean()
