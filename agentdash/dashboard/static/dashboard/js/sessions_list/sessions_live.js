/**
 * The sessions list, kept current while it is open.
 *
 * The list's socket (`/ws/sessions/`) says which of the reader's sessions changed, at most
 * once a second. The rows shown are then read again (`/session-rows/`, through the page's
 * own filters) and their cells set as text. On the first page rows move to where their new
 * activity puts them, and sessions not shown yet are counted in a notice whose link shows
 * them (rows never appear under the reader's pointer by themselves); a row that no longer
 * matches the filters (or was deleted) is marked so. A row being renamed is left as it is.
 * After a reconnect the rows are read again (`live/sessions_changed.js`).
 *
 * @module dashboard/sessions_live
 */

import { onSessionsChanged } from "../../../live/js/sessions_changed.js";
import { el, replaceChildren } from "../../../core/js/dom.js";

const CURSOR_PARAMS = ["after", "before", "page"];
const COUNT = new Intl.NumberFormat("en-US");

/**
 * @typedef {object} Row a row as `/session-rows/` sends it
 * @property {string} id
 * @property {string} title
 * @property {string} first_message
 * @property {string|null} run_status
 * @property {number} span_count
 * @property {number} error_count
 * @property {number} feedback_up the chat's thumbs up on its answers
 * @property {number} feedback_down
 * @property {{calls: number, input: number, output: number, cost_usd: number|null, unpriced: string[]}} usage
 * @property {string} usage_tokens
 * @property {string} usage_cost
 * @property {string} last_activity ISO 8601
 * @property {string} cursor
 */

/**
 * @param {object} parts
 * @param {HTMLElement} parts.card the list's section (its table may come and go)
 * @param {HTMLElement} parts.news the notice of sessions not shown yet
 * @param {HTMLElement} parts.indicator says whether the list is live
 * @param {() => void} parts.onUpdated after cells changed (times are written again)
 */
export function keepListCurrent({ card, news, indicator, onUpdated }) {
  const params = new URLSearchParams(location.search);
  // A list in order of activity, on its first page, takes news and keeps its order; one in
  // order of a score (sort) only follows its rows.
  const firstPage = CURSOR_PARAMS.every((name) => !params.has(name)) && !params.get("sort");
  for (const name of CURSOR_PARAMS) params.delete(name);

  async function readAgain() {
    const rows = shownRows(card);
    const query = new URLSearchParams(params);
    for (const row of rows) query.append("id", row.dataset.sessionId || "");
    if (firstPage) query.set("since", rows.length ? rows[0].dataset.cursor || "start" : "start");
    const response = await fetch(`/session-rows/?${query}`, {
      headers: { Accept: "application/json" },
      credentials: "same-origin",
    }).catch(() => null);
    if (!response || !response.ok) return; // the next notice tries again
    const answer = await response.json().catch(() => null);
    if (!answer || !Array.isArray(answer.rows)) return;
    apply(card, rows, answer.rows, firstPage);
    showNews(news, Number(answer.newer) || 0, Number(answer.newer_max) || 0);
    onUpdated();
  }

  onSessionsChanged({ indicator, read: readAgain });
}

/** @param {HTMLElement} card @returns {HTMLTableRowElement[]} the rows shown, in order */
function shownRows(card) {
  return [.../** @type {NodeListOf<HTMLTableRowElement>} */ (card.querySelectorAll("tbody tr.session-row"))];
}

/**
 * @param {HTMLElement} card
 * @param {HTMLTableRowElement[]} asked
 * @param {Row[]} found
 * @param {boolean} firstPage
 */
function apply(card, asked, found, firstPage) {
  const byId = new Map(found.map((row) => [row.id, row]));
  for (const tr of asked) {
    const row = byId.get(tr.dataset.sessionId || "");
    if (!row) {
      tr.classList.add("stale");
      tr.title = "No longer matches these filters, or deleted: reload to see the list as it is now";
      continue;
    }
    tr.classList.remove("stale");
    tr.removeAttribute("title");
    if (tr.classList.contains("renaming")) continue;
    const active = tr.dataset.cursor !== row.cursor; // else only counts changed, if anything
    setCells(tr, row);
    if (!active) continue;
    tr.classList.remove("updated");
    void tr.offsetWidth; // restart the highlight
    tr.classList.add("updated");
  }
  if (firstPage) reorder(card, asked);
}

/** @param {HTMLTableRowElement} tr @param {Row} row */
function setCells(tr, row) {
  tr.dataset.cursor = row.cursor;
  const title = tr.querySelector("a.session-title");
  if (title) {
    title.textContent = row.title || "Untitled session";
    title.classList.toggle("untitled", !row.title);
    if (row.first_message) title.setAttribute("title", row.first_message);
    else title.removeAttribute("title");
  }
  const activity = tr.querySelector("time[data-format='ago']");
  if (activity) activity.setAttribute("datetime", row.last_activity);
  const status = tr.querySelector(".run-status");
  if (status instanceof HTMLElement) {
    status.dataset.status = row.run_status || "none";
    status.textContent = row.run_status || "no runs";
  }
  const usage = tr.querySelector(".session-usage");
  if (usage instanceof HTMLElement) {
    usage.dataset.input = String(row.usage.input);
    usage.dataset.output = String(row.usage.output);
    usage.dataset.costUsd = row.usage.cost_usd === null ? "" : String(row.usage.cost_usd);
    if (row.usage.unpriced.length) {
      usage.title = `No price for: ${row.usage.unpriced.join(", ")} (not in the cost)`;
    } else usage.removeAttribute("title");
    const shown = row.usage.calls
      ? [el("span", { class: "usage-tokens", text: row.usage_tokens }), " ", el("span", { class: "usage-cost", text: row.usage_cost })]
      : [el("span", { class: "muted", text: "—" })];
    replaceChildren(usage, ...shown);
  }
  const spans = tr.querySelector(".span-count");
  if (spans) spans.textContent = COUNT.format(row.span_count);
  const errors = tr.querySelector(".error-count");
  if (errors) {
    errors.textContent = COUNT.format(row.error_count);
    errors.classList.toggle("has-errors", row.error_count > 0);
  }
  const up = tr.querySelector(".feedback-up");
  if (up) up.textContent = `▲ ${COUNT.format(row.feedback_up)}`;
  const down = tr.querySelector(".feedback-down");
  if (down) {
    down.textContent = `▼ ${COUNT.format(row.feedback_down)}`;
    down.classList.toggle("has-down", row.feedback_down > 0);
  }
}

/**
 * Newest activity first, as the server orders the list; the focus stays where it was.
 *
 * @param {HTMLElement} card
 * @param {HTMLTableRowElement[]} rows
 */
function reorder(card, rows) {
  const body = card.querySelector("tbody");
  if (!body) return;
  const sorted = [...rows].sort((a, b) => compareCursors(b.dataset.cursor || "", a.dataset.cursor || ""));
  if (sorted.every((row, i) => row === rows[i])) return;
  const focused = document.activeElement;
  body.append(...sorted);
  if (focused instanceof HTMLElement && body.contains(focused)) focused.focus({ preventScroll: true });
}

/**
 * Order two cursors ("<last activity>:<id>") as the list's sort key does.
 *
 * @param {string} a
 * @param {string} b
 * @returns {number}
 */
function compareCursors(a, b) {
  const [atA, idA] = splitCursor(a);
  const [atB, idB] = splitCursor(b);
  if (atA !== atB) return atA < atB ? -1 : 1;
  return idA < idB ? -1 : idA > idB ? 1 : 0;
}

/** @param {string} cursor @returns {[number, string]} the last activity, the id */
function splitCursor(cursor) {
  const at = cursor.indexOf(":");
  return [Number(cursor.slice(0, at)), cursor.slice(at + 1)];
}

/** @param {HTMLElement} news @param {number} newer @param {number} max */
function showNews(news, newer, max) {
  news.hidden = newer === 0;
  const text = news.querySelector(".list-news-text");
  if (!text) return;
  const count = newer >= max && max > 0 ? `${max}+` : String(newer);
  text.textContent = newer === 1 ? "1 more session has new activity." : `${count} more sessions have new activity.`;
}
