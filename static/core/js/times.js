/**
 * Times in the reader's zone and language. A page renders each time on the server as
 * `<time datetime="…ISO…" data-format="…">` with its text in UTC (saying so), and this module
 * shows it again where the page is read: `date` ("Nov 24, 23:41"), `seconds` (to the second,
 * "Nov 24, 23:41:07") or `ago` ("5 min ago", the date after a week); the exact time, with the
 * zone, on hover. local_times.js does it for every page, and again each minute.
 *
 * @module core/times
 */

export const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** @type {Map<string, Intl.DateTimeFormat>} by year shown or not, and seconds shown or not */
const dates = new Map();
/** @type {Intl.RelativeTimeFormat|null} */
let relative = null;

/**
 * A date and time for people, in the reader's zone and language, with ASCII digits; the
 * year only when it is not this one ("Nov 24, 11:41 PM", "Mar 3, 2025, 09:12"), the seconds
 * when asked ("Nov 24, 23:41:07").
 *
 * @param {Date} at
 * @param {{seconds?: boolean}} [options]
 * @returns {string}
 */
export function formatDate(at, { seconds = false } = {}) {
  const withYear = at.getFullYear() !== new Date().getFullYear();
  const key = `${withYear}:${seconds}`;
  let format = dates.get(key);
  if (!format) {
    format = new Intl.DateTimeFormat(undefined, {
      year: withYear ? "numeric" : undefined,
      month: "short",
      day: "numeric",
      hour: "2-digit",
      minute: "2-digit",
      second: seconds ? "2-digit" : undefined,
      numberingSystem: "latn",
    });
    dates.set(key, format);
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
export function formatExact(at) {
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
export function formatAgo(at, now) {
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

/**
 * Show every `time[data-format]` under `root` in the reader's zone (its exact time on hover).
 *
 * @param {ParentNode} [root]
 */
export function showTimes(root = document) {
  const now = Date.now();
  for (const node of /** @type {NodeListOf<HTMLTimeElement>} */ (root.querySelectorAll("time[data-format]"))) {
    const at = new Date(node.getAttribute("datetime") || "");
    if (Number.isNaN(at.getTime())) continue;
    const format = node.dataset.format;
    node.textContent = format === "ago" ? formatAgo(at, now) : formatDate(at, { seconds: format === "seconds" });
    node.setAttribute("title", formatExact(at));
  }
}
