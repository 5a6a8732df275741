/**
 * Formatting for the session page: durations, counts, times, JSON. Pure functions returning
 * strings.
 *
 * @module dashboard/format
 */

const NS_PER_MS = 1e6;

/**
 * The current time in Unix nanoseconds (as a float: enough for millisecond durations).
 *
 * @returns {number}
 */
export function nowNs() {
  return (performance.timeOrigin + performance.now()) * NS_PER_MS;
}

/**
 * A duration for people: "840 µs", "12.3 ms", "1.25 s", "2 m 05 s".
 *
 * @param {number} ns nanoseconds
 * @returns {string}
 */
export function formatDuration(ns) {
  if (!Number.isFinite(ns) || ns < 0) return "";
  const ms = ns / NS_PER_MS;
  if (ms < 1) return `${Math.round(ns / 1000)} µs`;
  if (ms < 100) return `${ms.toFixed(1)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(2)} s`;
  const m = Math.floor(s / 60);
  return `${m} m ${String(Math.round(s - m * 60)).padStart(2, "0")} s`;
}

/** @type {Intl.NumberFormat|null} */
let counts = null;

/**
 * A count for people, with the reader's thousands separators ("50,000" in English).
 *
 * @param {number|null|undefined} n
 * @returns {string} "" for a value that is not a finite number
 */
export function formatCount(n) {
  if (typeof n !== "number" || !Number.isFinite(n)) return "";
  counts ??= new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
  return counts.format(n);
}

/**
 * A 24-hour clock time ("14:03:27") from Unix seconds, in the reader's time zone, with ASCII
 * digits like the durations. Built from the date's own fields: an
 * `Intl.DateTimeFormat` (or `toLocaleTimeString` with options, which makes one per call)
 * costs 12–16 ms to create in a fresh tab, about half of drawing the latest page of chat.
 *
 * @param {number|null|undefined} seconds
 * @returns {string}
 */
export function formatClock(seconds) {
  if (typeof seconds !== "number" || !Number.isFinite(seconds)) return "";
  const at = new Date(seconds * 1000);
  if (Number.isNaN(at.getTime())) return "";
  return [at.getHours(), at.getMinutes(), at.getSeconds()]
    .map((part) => String(part).padStart(2, "0"))
    .join(":");
}

/**
 * An ISO timestamp with milliseconds from Unix nanoseconds.
 *
 * @param {number|null|undefined} ns
 * @returns {string}
 */
export function formatNsTimestamp(ns) {
  if (typeof ns !== "number" || !Number.isFinite(ns)) return "";
  return new Date(ns / NS_PER_MS).toISOString();
}

/**
 * Pretty JSON for a <pre>. A string holding a JSON object or array (span attributes often
 * carry serialized payloads) is parsed and pretty-printed too; other strings stay as they are.
 *
 * @param {any} value
 * @returns {string}
 */
export function formatJson(value) {
  if (typeof value === "string") {
    const trimmed = value.trim();
    if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
      try {
        return JSON.stringify(JSON.parse(trimmed), null, 2);
      } catch {
        return value;
      }
    }
    return value;
  }
  if (value === undefined) return "";
  return JSON.stringify(value, null, 2);
}

/**
 * A compact one-line rendering of a value (for tables of state).
 *
 * @param {any} value
 * @param {number} [max] longest output before an ellipsis
 * @returns {string}
 */
export function formatInline(value, max = 160) {
  const text = typeof value === "string" ? JSON.stringify(value) : JSON.stringify(value) ?? "";
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** @type {Intl.NumberFormat|null} */
let dollars = null;

/**
 * US dollars for people, with 4 to 6 significant digits ("$0.001710", "$4.02952",
 * "$12,345.7"); "$0" for nothing spent; "—" for an unknown cost (null: no price).
 *
 * @param {number|null|undefined} usd
 * @returns {string}
 */
export function formatCost(usd) {
  if (typeof usd !== "number" || !Number.isFinite(usd)) return "—";
  if (usd === 0) return "$0";
  dollars ??= new Intl.NumberFormat("en-US", {
    minimumSignificantDigits: 4,
    maximumSignificantDigits: 6,
  });
  return `${usd < 0 ? "−" : ""}$${dollars.format(Math.abs(usd))}`;
}
