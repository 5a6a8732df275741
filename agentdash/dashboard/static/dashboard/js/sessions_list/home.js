/**
 * The sessions list: times in the reader's zone, renaming in place, rows kept current
 * (sessions_live.js). Titles are text: set with textContent only. (Filters apply with their Filter button or Enter, never while a
 * choice is being made: a keyboard's arrows change a select's value one step at a time.)
 *
 * @module dashboard/home
 */

import { keepListCurrent } from "./sessions_live.js";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** @type {Map<boolean, Intl.DateTimeFormat>} with the year or without */
const dates = new Map();
/** @type {Intl.RelativeTimeFormat|null} */
let relative = null;

/**
 * A date and time for people, in the reader's zone and language, with ASCII digits; the
 * year only when it is not this one ("Nov 24, 11:41 PM", "Mar 3, 2025, 09:12").
 *
 * @param {Date} at
 * @returns {string}
 */
function formatDate(at) {
  const withYear = at.getFullYear() !== new Date().getFullYear();
  let format = dates.get(withYear);
  if (!format) {
    format = new Intl.DateTimeFormat(undefined, {
      year: withYear ? "numeric" : undefined,
      month: "short",
      day: "numeric",
      hour: "2-digit",
      minute: "2-digit",
      numberingSystem: "latn",
    });
    dates.set(withYear, format);
  }
  return format.format(at);
}

/** @type {Intl.DateTimeFormat|null} */
let exact = null;

/**
 * The exact time, for the hover: weekday, date with the year, time to the second and the
 * zone ("Sat, Nov 28, 2026, 15:29:03 UTC").
 *
 * @param {Date} at
 * @returns {string}
 */
function formatExact(at) {
  exact ??= new Intl.DateTimeFormat(undefined, {
    weekday: "short",
    year: "numeric",
    month: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    timeZoneName: "short",
    numberingSystem: "latn",
  });
  return exact.format(at);
}

/**
 * How long ago, for recent times ("5 min ago"); the date for older ones.
 *
 * @param {Date} at
 * @param {number} now
 * @returns {string}
 */
function formatAgo(at, now) {
  const ago = now - at.getTime();
  if (ago < 0 || ago >= 7 * DAY) return formatDate(at);
  if (ago < MINUTE) return "just now";
  // numberingSystem is ECMA-402's (browsers take it); TypeScript's ES2022 lib lacks it.
  relative ??= new Intl.RelativeTimeFormat(undefined, /** @type {Intl.RelativeTimeFormatOptions} */ ({
    numeric: "auto",
    style: "short",
    numberingSystem: "latn",
  }));
  if (ago < HOUR) return relative.format(-Math.floor(ago / MINUTE), "minute");
  if (ago < DAY) return relative.format(-Math.floor(ago / HOUR), "hour");
  return relative.format(-Math.floor(ago / DAY), "day");
}

function showTimes() {
  const now = Date.now();
  for (const node of /** @type {NodeListOf<HTMLTimeElement>} */ (document.querySelectorAll("time[data-format]"))) {
    const at = new Date(node.getAttribute("datetime") || "");
    if (Number.isNaN(at.getTime())) continue;
    node.textContent = node.dataset.format === "ago" ? formatAgo(at, now) : formatDate(at);
    node.setAttribute("title", formatExact(at));
  }
}

/**
 * @param {HTMLTableRowElement} row
 * @param {boolean} editing
 */
function setEditing(row, editing) {
  const form = /** @type {HTMLFormElement|null} */ (row.querySelector(".rename-form"));
  const link = /** @type {HTMLElement|null} */ (row.querySelector(".session-title"));
  if (!form || !link) return;
  form.hidden = !editing;
  link.hidden = editing;
  row.classList.toggle("renaming", editing);
  const input = /** @type {HTMLInputElement} */ (form.elements.namedItem("title"));
  if (editing) {
    input.value = link.classList.contains("untitled") ? "" : link.textContent || "";
    input.focus();
    input.select();
  }
  const error = form.querySelector(".rename-error");
  if (error instanceof HTMLElement) error.hidden = true;
}

/**
 * @param {HTMLFormElement} form
 * @returns {Promise<void>}
 */
async function rename(form) {
  const row = /** @type {HTMLTableRowElement} */ (form.closest("tr"));
  const error = /** @type {HTMLElement} */ (form.querySelector(".rename-error"));
  const link = /** @type {HTMLElement} */ (row.querySelector(".session-title"));
  const buttons = form.querySelectorAll("button");
  buttons.forEach((b) => (b.disabled = true));
  try {
    const response = await fetch(form.action, {
      method: "POST",
      body: new FormData(form),
      headers: { Accept: "application/json" },
      credentials: "same-origin",
    });
    const answer = await response.json().catch(() => ({}));
    if (!response.ok || typeof answer.title !== "string") {
      error.textContent = answer.error || `Could not rename (HTTP ${response.status}).`;
      error.hidden = false;
      return;
    }
    link.textContent = answer.title;
    link.classList.remove("untitled");
    setEditing(row, false);
    link.focus();
  } catch {
    error.textContent = "Could not rename: the server did not answer.";
    error.hidden = false;
  } finally {
    buttons.forEach((b) => (b.disabled = false));
  }
}

document.addEventListener("click", (event) => {
  const target = /** @type {Element} */ (event.target);
  const row = /** @type {HTMLTableRowElement|null} */ (target.closest("tr.session-row"));
  if (!row) return;
  if (target.closest(".rename-link")) {
    event.preventDefault();
    setEditing(row, true);
  } else if (target.closest(".rename-cancel")) {
    setEditing(row, false);
    /** @type {HTMLElement|null} */ (row.querySelector(".session-title"))?.focus();
  }
});

document.addEventListener("keydown", (event) => {
  const target = /** @type {Element} */ (event.target);
  const row = /** @type {HTMLTableRowElement|null} */ (target.closest("tr.renaming"));
  if (row && event.key === "Escape") {
    setEditing(row, false);
    /** @type {HTMLElement|null} */ (row.querySelector(".session-title"))?.focus();
  }
});

document.addEventListener("submit", (event) => {
  const form = /** @type {HTMLFormElement} */ (event.target);
  if (!form.classList.contains("rename-form")) return;
  event.preventDefault();
  void rename(form);
});

showTimes();
setInterval(showTimes, MINUTE);
const card = document.querySelector(".sessions-card");
const news = document.querySelector("#list-news");
const indicator = document.querySelector("#list-live");
if (card instanceof HTMLElement && news instanceof HTMLElement && indicator instanceof HTMLElement) {
  keepListCurrent({ card, news, indicator, onUpdated: showTimes });
}
