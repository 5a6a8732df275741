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
 * A duration for people: "840 µs", "12.3 ms", "1.25 s", "2 m 05 s". Each unit is chosen after
 * rounding, so a value just under a boundary reads in the next unit ("1.0 ms", not "1000 µs";
 * "2 m 00 s", not "1 m 60 s").
 *
 * @param {number} ns nanoseconds
 * @returns {string}
 */
export function formatDuration(ns) {
  if (!Number.isFinite(ns) || ns < 0) return "";
  const us = Math.round(ns / 1000);
  if (us < 1000) return `${us} µs`;
  const ms = ns / NS_PER_MS;
  const tenths = ms.toFixed(1);
  if (Number(tenths) < 100) return `${tenths} ms`;
  const wholeMs = Math.round(ms);
  if (wholeMs < 1000) return `${wholeMs} ms`;
  const s = ms / 1000;
  const hundredths = s.toFixed(2);
  if (Number(hundredths) < 60) return `${hundredths} s`;
  const wholeS = Math.round(s);
  const m = Math.floor(wholeS / 60);
  return `${digitsOf(m)} m ${String(wholeS % 60).padStart(2, "0")} s`;
}

/**
 * A count for people, with thousands separators ("50,000"), as the server's pages write them;
 * never in exponent form (1e21 is "1,000,000,000,000,000,000,000", not "1e+21").
 * Written without `Intl`: the first `Intl` formatter a tab makes loads the locale data, some
 * 15–20 ms on the way to the page's first paint (the header's totals, the span count).
 *
 * @param {number|null|undefined} n
 * @returns {string} "" for a value that is not a finite number
 */
export function formatCount(n) {
  if (typeof n !== "number" || !Number.isFinite(n)) return "";
  const whole = Math.round(Math.abs(n));
  const sign = n < 0 && whole !== 0 ? "-" : "";
  return sign + grouped(digitsOf(whole));
}

/**
 * A whole number (>= 0) in all its digits, exactly: `toFixed` writes 1e21 and more as "1e+21".
 *
 * @param {number} whole
 * @returns {string}
 */
function digitsOf(whole) {
  return whole < 1e21 ? whole.toFixed(0) : BigInt(whole).toString();
}

/**
 * "1234567" → "1,234,567" (digits only).
 *
 * @param {string} digits
 * @returns {string}
 */
function grouped(digits) {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
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
 * An ISO timestamp with milliseconds from Unix nanoseconds; a time past what a date can hold
 * (±8.64e21 ns) is said as its nanoseconds ("1,000,…,000 ns since 1970 (no date that far)").
 *
 * @param {number|null|undefined} ns
 * @returns {string}
 */
export function formatNsTimestamp(ns) {
  if (typeof ns !== "number" || !Number.isFinite(ns)) return "";
  const at = new Date(ns / NS_PER_MS);
  if (Number.isNaN(at.getTime())) return `${formatCount(ns)} ns since 1970 (no date that far)`;
  return at.toISOString();
}

/**
 * Pretty JSON for a <pre>. A string holding a JSON object or array (span attributes often
 * carry serialized payloads) is parsed and pretty-printed too; other strings stay as they are.
 * What JSON cannot write (undefined, a function, a symbol) is "".
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
  return JSON.stringify(value, null, 2) ?? "";
}

/**
 * A compact one-line rendering of a value (for tables of state), cut between code points: a
 * surrogate pair is kept whole or dropped whole. (Not between graphemes: an `Intl.Segmenter`
 * costs some 12 ms to create in a fresh process, as much as the formatters this module avoids.)
 *
 * @param {any} value
 * @param {number} [max] longest output (UTF-16 units) before an ellipsis
 * @returns {string}
 */
export function formatInline(value, max = 160) {
  const text = JSON.stringify(value) ?? "";
  if (text.length <= max) return text;
  let end = Math.max(0, max - 1);
  if (isLowSurrogate(text.charCodeAt(end)) && isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
  return `${text.slice(0, end)}…`;
}

/** @param {number} unit a UTF-16 code unit (NaN past either end) @returns {boolean} */
function isHighSurrogate(unit) {
  return unit >= 0xd800 && unit <= 0xdbff;
}

/** @param {number} unit a UTF-16 code unit (NaN past either end) @returns {boolean} */
function isLowSurrogate(unit) {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/** @type {Intl.NumberFormat|null} */
let dollars = null;

/**
 * US dollars for people, with 4 to 6 significant digits ("$0.001710", "$4.02952",
 * "$12,345.7"); "$0" for nothing spent; "—" for an unknown cost (null: no price). Written
 * without `Intl` (see {@link formatCount}) but for amounts under a millionth of a dollar.
 *
 * @param {number|null|undefined} usd
 * @returns {string}
 */
export function formatCost(usd) {
  if (typeof usd !== "number" || !Number.isFinite(usd)) return "—";
  if (usd === 0) return "$0";
  const amount = Math.abs(usd);
  let text = significant(amount);
  if (text === null) {
    dollars ??= new Intl.NumberFormat("en-US", {
      minimumSignificantDigits: 4,
      maximumSignificantDigits: 6,
    });
    text = dollars.format(amount);
  }
  return `${usd < 0 ? "−" : ""}$${text}`;
}

/**
 * `x` (> 0) with 6 significant digits, trailing zeros dropped down to 4, grouped; null below a
 * millionth (where plain notation needs more than `toPrecision` gives).
 *
 * @param {number} x
 * @returns {string|null}
 */
function significant(x) {
  if (x < 1e-6) return null;
  let text = x.toPrecision(6);
  if (text.includes("e")) text = plainWhole(text); // a million and more: whole
  let [whole, fraction = ""] = text.split(".");
  const leading = whole === "0" ? (fraction.match(/^0*/) || [""])[0].length : 0;
  let digits = (whole === "0" ? 0 : whole.length) + fraction.length - leading;
  while (fraction.endsWith("0") && digits > 4) {
    fraction = fraction.slice(0, -1);
    digits -= 1;
  }
  return grouped(whole) + (fraction ? `.${fraction}` : "");
}

/**
 * The exponent form `toPrecision` gives a number of a million and more, in plain digits:
 * "1.23457e+21" → "1234570000000000000000" (as `String` writes it below 1e21, and beyond).
 *
 * @param {string} text
 * @returns {string}
 */
function plainWhole(text) {
  const [mantissa, exponent] = text.split("e");
  const [whole, fraction = ""] = mantissa.split(".");
  return (whole + fraction).padEnd(whole.length + Number(exponent), "0");
}
