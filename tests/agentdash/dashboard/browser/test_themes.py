"""Light and dark in a real browser: every main view keeps WCAG AA contrast in both themes,
the system's preference is followed until someone chooses, the toggle switches the open page
(the timeline's overview repaints in the new colours) and the choice sticks across pages and
visits.

The contrast check (contrast.js) runs in the page: every visible text node, style-made text
and form field against the colour actually behind it, and the edges of fields, switches and
icon buttons; it fails naming each element, its text and its ratio.

``AGENTDASH_SCREENSHOTS=<dir>`` saves the views in both themes there (docs/screenshots).
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from tests.agentdash.dashboard.browser.harness import POLL_MS, Browser, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CONTRAST_JS = (Path(__file__).parent / "contrast.js").read_text(encoding="utf-8")
COOKIE = "agentdash_theme"
LIVE_TIMEOUT = 30_000  # ms: a run on the offline model takes well under a second
THEMES = ["light", "dark"]
BACKGROUND = {"light": "rgb(247, 248, 250)", "dark": "rgb(14, 17, 22)"}  # --bg of each


def choose_theme(browser: Browser, theme: str) -> None:
    """As if the toggle had been used on an earlier visit: the cookie is there."""
    browser.page.context.add_cookies([{"name": COOKIE, "value": theme, "url": browser.server.url}])


def contrast_failures(browser: Browser, view: str) -> list[str]:
    found: dict[str, Any] = browser.page.evaluate(CONTRAST_JS)
    assert found["checked"] > 10, f"{view}: hardly anything was checked ({found['checked']})"
    return [
        f"{view}: {f['what']} {f['text']!r}: {f['ratio']} < {f['needs']} ({f['fg']} on {f['bg']})"
        for f in found["failures"]
    ]


def body_background(browser: Browser) -> str:
    value: str = browser.page.evaluate("() => getComputedStyle(document.body).backgroundColor")
    return value


def chat(browser: Browser, question: str, answer: str) -> None:
    """Start a chat with the capital agent from the home page and wait for its answer, every
    span ended."""
    page = browser.page
    browser.goto("/")
    with page.expect_navigation():
        page.locator("[data-agent='capital_agent']").first.click()
    page.wait_for_selector("#composer-text:not([disabled])", timeout=LIVE_TIMEOUT)
    page.fill("#composer-text", question)
    page.wait_for_selector("#composer-send:not([disabled])", timeout=LIVE_TIMEOUT)
    page.press("#composer-text", "Enter")
    page.locator(".msg-agent:not(.streaming) .msg-body.md", has_text=answer).first.wait_for(
        timeout=LIVE_TIMEOUT
    )
    page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
    page.locator("#span-tree .span[data-state='running']").first.wait_for(
        state="detached", timeout=LIVE_TIMEOUT
    )


@pytest.mark.parametrize("theme", THEMES)
def test_the_main_views_keep_aa_contrast(browser: Browser, theme: str) -> None:
    choose_theme(browser, theme)
    page = browser.page
    failures: list[str] = []

    # The login page, with its error.
    browser.goto("/login/")
    page.fill("#id_username", "operator")
    page.fill("#id_password", "not the password")
    # The page with the error, loaded (its stylesheets too: an element found is not styled yet).
    with page.expect_navigation(wait_until="load"):
        page.click("main form button[type=submit]")
    page.wait_for_selector(".error")
    assert body_background(browser) == BACKGROUND[theme]
    failures += contrast_failures(browser, "login")

    # The sessions list.
    browser.log_in("operator")
    failures += contrast_failures(browser, "home (empty)")

    # The session page: a chat, the timeline, an open model span, the controls with a
    # refused state edit (an error) and the state table.
    chat(browser, "What is the capital of France?", "Paris")
    page.fill("#state-key", "favourite_city")
    page.fill("#state-value", "not json")
    page.fill("#state-reason", "contrast check")
    page.click("#state-form button[type=submit]")
    page.wait_for_selector("#state-status[data-kind='error']")
    page.locator("#span-tree .span[data-kind='model'] > .span-row").first.click()
    page.wait_for_selector("#span-detail:not([hidden])")
    page.mouse.move(0, 0)  # no hover state in the picture
    failures += contrast_failures(browser, "session")
    screenshot(browser, f"theme-{theme}-session.png")

    # A tool call's and a callback's details; the keys dialog.
    for kind in ("tool", "callback"):
        row = page.locator(f"#span-tree .span[data-kind='{kind}']").first
        row.locator("> .span-row").click()
        page.wait_for_selector(f"#span-detail[data-span-id='{row.get_attribute('data-span-id')}']")
        failures += contrast_failures(browser, f"session, a {kind}'s details")
    page.click(".keys-button")
    page.wait_for_selector("#keymap[open]")
    failures += contrast_failures(browser, "session, the keys dialog")
    page.keyboard.press("Escape")

    # Finding spans: matches marked, the rows around them dimmed — and still readable.
    page.fill("#find-text", "redirect")
    page.wait_for_selector("#span-tree [data-match='hit']")
    page.wait_for_selector("#span-tree [data-match='context']")
    failures += contrast_failures(browser, "session, finding spans")

    browser.goto("/")
    page.wait_for_selector("main table, main .card")
    failures += contrast_failures(browser, "home")
    screenshot(browser, f"theme-{theme}-home.png")

    assert not failures, f"{theme} theme below WCAG AA:\n  " + "\n  ".join(failures)
    browser.console.assert_clean()


@pytest.mark.parametrize("theme", THEMES)
def test_the_phone_timeline_keeps_aa_contrast(phone: Browser, theme: str) -> None:
    choose_theme(phone, theme)
    phone.log_in("alice")
    chat(phone, "What is the capital of Japan?", "Tokyo")
    page = phone.page
    failures = contrast_failures(phone, "phone chat")
    page.click("#tab-timeline")
    page.wait_for_selector("#timeline-panel.is-active")
    page.locator("#span-tree .span[data-kind='tool'] > .span-row").first.click()
    page.wait_for_selector("#span-detail:not([hidden])")
    failures += contrast_failures(phone, "phone timeline")
    screenshot(phone, f"theme-{theme}-phone-timeline.png")
    assert not failures, f"{theme} theme below WCAG AA:\n  " + "\n  ".join(failures)
    phone.console.assert_clean()


def overview_has(browser: Browser, variable: str) -> None:
    """Wait until the timeline's overview shows a pixel of exactly the colour the theme's
    ``variable`` holds now."""
    browser.page.wait_for_function(
        """(name) => {
          const wanted = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
          const probe = document.createElement("canvas").getContext("2d");
          probe.fillStyle = wanted;
          const hex = probe.fillStyle;  // #rrggbb
          const rgb = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
          const canvas = document.querySelector(".tl-minimap");
          const { data } = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height);
          const [r, g, b] = rgb;
          for (let i = 0; i < data.length; i += 4) {
            if (data[i + 3] === 255 && data[i] === r && data[i + 1] === g && data[i + 2] === b) {
              return true;
            }
          }
          return false;
        }""",
        arg=variable,
        timeout=LIVE_TIMEOUT,
        polling=POLL_MS,
    )


def toggle(browser: Browser, to: str) -> None:
    button = browser.page.locator(".theme-switch button")
    button.click()
    browser.page.wait_for_function(
        "(to) => document.documentElement.dataset.theme === to",
        arg=to,
        timeout=5_000,
        polling=POLL_MS,
    )
    assert button.get_attribute("data-choice") == to


def test_the_system_decides_until_someone_chooses_and_the_choice_sticks(
    browser: Browser,
) -> None:
    page = browser.page
    page.emulate_media(color_scheme="dark")
    browser.goto("/login/")
    assert page.evaluate("() => document.documentElement.dataset.theme") == "system"
    assert body_background(browser) == BACKGROUND["dark"]
    page.emulate_media(color_scheme="light")
    assert body_background(browser) == BACKGROUND["light"]

    browser.log_in("operator")
    chat(browser, "What is the capital of France?", "Paris")
    overview_has(browser, "--c-agent")

    # system → light → dark: the page and the overview's canvas follow at once.
    toggle(browser, "light")
    assert body_background(browser) == BACKGROUND["light"]
    toggle(browser, "dark")
    assert body_background(browser) == BACKGROUND["dark"]
    overview_has(browser, "--c-agent")  # the dark theme's agent colour, repainted
    cookie = {c["name"]: c["value"] for c in page.context.cookies()}
    assert cookie[COOKIE] == "dark"

    # The choice holds on the next page and the next visit, whatever the system says.
    page.emulate_media(color_scheme="light")
    browser.goto("/")
    assert page.evaluate("() => document.documentElement.dataset.theme") == "dark"
    assert body_background(browser) == BACKGROUND["dark"]
    page.go_back()
    page.reload()
    assert body_background(browser) == BACKGROUND["dark"]

    # Back to the system's choice: the system switching repaints the open page.
    toggle(browser, "system")
    assert body_background(browser) == BACKGROUND["light"]
    page.emulate_media(color_scheme="dark")
    assert body_background(browser) == BACKGROUND["dark"]
    overview_has(browser, "--c-agent")
    browser.console.assert_clean()


@pytest.mark.parametrize("width", [390, 360, 320])
def test_the_toggle_fits_the_top_bar_of_a_phone(phone: Browser, width: int) -> None:
    """The operator's bar is the longest (Sessions, Admin, the name, Log out): nothing in it
    overlaps the toggle or leaves the screen."""
    phone.page.set_viewport_size({"width": width, "height": 700})
    phone.log_in("operator")
    boxes: list[dict[str, Any]] = phone.page.evaluate(
        """() => [...document.querySelectorAll(".topbar .brand, .topbar nav > *, .theme-switch")]
          .filter((el) => el.getClientRects().length)
          .map((el) => {
            const r = el.getBoundingClientRect();
            return { what: el.className || el.textContent.trim(), left: r.left, right: r.right };
          })"""
    )
    assert boxes[-1]["what"] == "theme-switch"
    assert all(b["left"] >= 0 and b["right"] <= width for b in boxes), boxes
    for before, after in itertools.pairwise(boxes):
        assert before["right"] <= after["left"] + 0.5, (before, after)
