"""Tokens and cost in a real browser (see conftest.py): the session header's total is the sum
over the session's spans; a run's total shows after its messages in the chat and in the
operator's runs list, and the header grows while runs come in; a price edited in the admin
changes every cost on the page, and a model without a price shows its tokens with "—".

``AGENTDASH_SCREENSHOTS=<dir>`` saves screenshots there.
"""

from __future__ import annotations

import re
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

LIVE_TIMEOUT = 30_000
HEADER = "#session-usage"


@pytest.fixture(scope="module")
def priced_session(agentdash_server: LiveServer) -> dict[str, Any]:
    """Three runs of about 200 spans (one failed part-way), their model calls answered by
    gemini-2.5-flash-001: priced by the seeded gemini-2.5-flash row."""
    return session_generate(
        agentdash_server, "spans", "--count", "600", "--per-run", "200",
        "--failed", "1", "--cancelled", "0", "--owner", "alice",
    )  # fmt: skip


def header(browser: Browser) -> dict[str, Any]:
    """The header's total: its text, title and numbers (``cost``: None when unknown)."""
    browser.page.wait_for_selector(f"{HEADER}:not([hidden])", timeout=LIVE_TIMEOUT)
    found: dict[str, Any] = browser.page.eval_on_selector(
        HEADER,
        """(node) => ({
          text: node.textContent, title: node.title,
          input: Number(node.dataset.input), output: Number(node.dataset.output),
          cost: node.dataset.costUsd === "" ? null : Number(node.dataset.costUsd),
        })""",
    )
    return found


SPAN_SUMS = """async (path) => {
  let after = null, input = 0, output = 0, cost = 0, calls = 0, priced = 0;
  for (;;) {
    const query = new URLSearchParams({limit: "10000"});
    if (after) query.set("after", after);
    const page = await (await fetch(`${path}spans/?${query}`)).json();
    const at = Object.fromEntries(page.fields.map((name, i) => [name, i]));
    for (const row of page.rows) {
      if (row[at.tokens_in] === null && row[at.tokens_out] === null) continue;
      calls += 1;
      input += row[at.tokens_in] ?? 0;
      output += row[at.tokens_out] ?? 0;
      if (row[at.cost_usd] !== null) { cost += row[at.cost_usd]; priced += 1; }
    }
    if (!page.next) break;
    after = page.next;
  }
  return {input, output, cost, calls, priced};
}"""


def span_sums(browser: Browser, path: str) -> dict[str, Any]:
    """The session's model calls summed span by span, from its span pages (what the
    timeline draws its rows from)."""
    found: dict[str, Any] = browser.page.evaluate(SPAN_SUMS, path)
    return found


def assert_header_is_the_sum_of_the_spans(browser: Browser, path: str) -> dict[str, Any]:
    total, sums = header(browser), span_sums(browser, path)
    assert sums["calls"] > 0
    assert (total["input"], total["output"]) == (sums["input"], sums["output"])
    if sums["priced"]:
        assert total["cost"] == pytest.approx(sums["cost"], rel=1e-9, abs=1e-12)
    else:
        assert total["cost"] is None
    return total


def dollars(usd: float) -> str:
    """Dollars as the page writes them: 4 to 6 significant digits (for 0.001 ≤ usd < 1000)."""
    text = f"{usd:.6g}"
    significant = text.replace(".", "").lstrip("0")
    if len(significant) < 4:
        text += ("" if "." in text else ".") + "0" * (4 - len(significant))
    return f"${text}"


def run_lines(browser: Browser) -> list[str]:
    return browser.page.eval_on_selector_all(
        "#messages > li.msg-usage", "(nodes) => nodes.map((n) => n.textContent)"
    )


def test_the_header_total_is_the_sum_of_the_spans(
    browser: Browser, priced_session: dict[str, Any]
) -> None:
    browser.log_in("operator")  # alice's session: an operator sees it, with its runs list
    browser.goto(priced_session["path"])
    total = assert_header_is_the_sum_of_the_spans(browser, priced_session["path"])
    assert total["cost"] > 0
    assert re.fullmatch(r"[\d,]+ → [\d,]+ tok · \$\d[\d,]*\.\d+", total["text"]), total["text"]
    assert "model calls" in total["title"]
    # Each run's total after its messages; together, the session's.
    lines = run_lines(browser)
    assert len(lines) == len(priced_session["runs"])
    numbers = [re.match(r"run · ([\d,]+) → ([\d,]+) tok", line) for line in lines]
    assert all(numbers), lines
    assert sum(int(m.group(1).replace(",", "")) for m in numbers if m) == total["input"]
    # A model span's row says its tokens and cost.
    browser.page.wait_for_selector('#span-tree [data-kind="model"] .tokens')
    row = browser.page.locator('#span-tree [data-kind="model"] .tokens').first
    assert re.fullmatch(r"\d[\d,]* → \d[\d,]* tok · \$\d\.\d+", row.text_content() or "")
    runs = browser.page.locator("#runs .run-usage")
    assert runs.count() == len(priced_session["runs"])
    screenshot(browser, "usage-session.png")
    browser.console.assert_clean()


def test_runs_add_up_live_in_the_header_the_chat_and_the_runs_list(browser: Browser) -> None:
    browser.log_in("operator")
    path = browser.new_chat("capital_agent", first="What is the capital of France?")
    page = browser.page
    page.wait_for_selector("#messages > li.msg-usage", timeout=LIVE_TIMEOUT)
    first = assert_header_is_the_sum_of_the_spans(browser, path)
    assert first["cost"] == 0  # the offline model is free (its seeded price is 0)
    (line,) = run_lines(browser)
    assert line == f"run · {first['text']}"  # one run: the session's total is the run's
    run_row = page.locator("#runs .run-usage").first.text_content()
    assert run_row == first["text"]

    # A second run, on the open page: the totals grow through the live messages alone.
    page.wait_for_selector("#connection[data-state='live']", timeout=LIVE_TIMEOUT)
    page.fill("#composer-text", "And the capital of Japan?")
    page.press("#composer-text", "Enter")
    page.wait_for_function(
        "([sel, before]) => Number(document.querySelector(sel).dataset.input) > before",
        arg=[HEADER, first["input"]],
        timeout=LIVE_TIMEOUT,
        polling=POLL_MS,
    )
    page.wait_for_function(
        "() => document.querySelectorAll('#messages > li.msg-usage').length === 2",
        timeout=LIVE_TIMEOUT,
        polling=POLL_MS,
    )
    second = assert_header_is_the_sum_of_the_spans(browser, path)
    assert second["input"] > first["input"] and second["output"] > first["output"]
    assert page.locator("#runs .run-usage").count() == 2
    browser.console.assert_clean()


def _admin_price(browser: Browser, model: str) -> str:
    """The change page of ``model``'s price row (from the admin's list, searched)."""
    browser.goto(f"/admin/spans/modelprice/?q={model}")
    link = browser.page.locator(f'#result_list a:text-is("{model}")')
    href = link.get_attribute("href")
    assert href, f"no price row for {model}"
    return href


def test_a_price_edited_in_the_admin_applies_and_no_price_shows_no_cost(
    browser: Browser,
) -> None:
    # Django's admin pages ask for /favicon.ico, which the site does not serve: not this
    # test's business.
    browser.page.route("**/favicon.ico", lambda route: route.fulfill(status=204, body=""))
    browser.log_in("admin")
    path = browser.new_chat("capital_agent", first="What is the capital of Italy?")
    browser.page.wait_for_selector("#messages > li.msg-usage", timeout=LIVE_TIMEOUT)
    tokens = header(browser)
    assert tokens["cost"] == 0

    change = _admin_price(browser, "offline")
    page = browser.page
    try:
        # $1,000 and $2,000 per million tokens: a cost the header shows with digits.
        browser.goto(change)
        page.fill("#id_input_per_mtok", "1000")
        page.fill("#id_output_per_mtok", "2000")
        page.fill("#id_reason", "a browser test's price")
        with page.expect_navigation():
            page.click('input[name="_save"]')
        browser.goto(path)
        priced = assert_header_is_the_sum_of_the_spans(browser, path)
        expected = (priced["input"] * 1000 + priced["output"] * 2000) / 1e6
        assert priced["cost"] == pytest.approx(expected)
        assert priced["text"].endswith(f" · {dollars(expected)}"), (priced, expected)

        # No price at all: tokens, and "—" for the cost.
        browser.goto(change.replace("/change/", "/delete/"))
        with page.expect_navigation():
            page.click('input[type="submit"]')
        browser.goto(path)
        unknown = assert_header_is_the_sum_of_the_spans(browser, path)
        assert unknown["cost"] is None and unknown["text"].endswith("tok · —")
        assert (unknown["input"], unknown["output"]) == (tokens["input"], tokens["output"])
        assert "no price for: offline" in unknown["title"]
        row = page.locator('#span-tree [data-kind="model"] .tokens').first
        assert (row.text_content() or "").endswith("tok · —")
        assert (page.locator("#messages > li.msg-usage").first.text_content() or "").endswith("—")
    finally:
        _offline_free_again(browser)
    browser.console.assert_clean()


def _offline_free_again(browser: Browser) -> None:
    """The offline model's row as seeded (other tests on this server count on it)."""
    page = browser.page
    browser.goto("/admin/spans/modelprice/?q=offline")
    found = page.locator('#result_list a:text-is("offline")')
    if found.count():
        browser.goto(found.get_attribute("href") or "")
    else:
        browser.goto("/admin/spans/modelprice/add/")
        page.fill("#id_model", "offline")
        page.select_option("#id_match", "exact")
        page.fill("#id_as_of", "2026-11-24")
        page.fill(
            "#id_source", "AgentDash's offline model: it runs in the server's process, no charge"
        )
    page.fill("#id_input_per_mtok", "0")
    page.fill("#id_output_per_mtok", "0")
    with page.expect_navigation():
        page.click('input[name="_save"]')


def test_on_a_phone_the_total_fits_the_header(
    phone: Browser, priced_session: dict[str, Any]
) -> None:
    phone.log_in("alice")
    phone.goto(priced_session["path"])
    total = header(phone)
    assert total["input"] > 0
    box = phone.page.locator(HEADER).bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
    assert_fits(phone, "the session page with its total")
    screenshot(phone, "usage-session-mobile.png")
    phone.console.assert_clean()
