/**
 * A span's summary: what a timeline row shows (identity, timing, status and a few display
 * fields the server read out of the attributes), read from a row of a summary page or from the
 * `summary` of a live span change — both made by the server's one derivation
 * (agentdash/spans/summaries.py); nothing here derives them again.
 *
 * @module dashboard/span_summary
 */

import { kindOf } from "./span_kinds.js";

export { kindOf };
/** The attribute naming a span's kind (runtime/telemetry/attributes.py, SPAN_KIND). */
const KIND_ATTR = "agentdash.span.kind";
/** What a guardrail may decide (`agentdash.guardrail.decision`). */
export const DECISIONS = new Set(["allowed", "blocked", "redacted", "unsafe", "limit"]);
const MESSAGE_CHARS = 500;
const TEXT_CHARS = 200;

/**
 * @typedef {object} Summary  what a row needs (the fields of a summary page, renamed)
 * @property {string} id
 * @property {string} trace
 * @property {string|null} parentId
 * @property {string} name
 * @property {string} kind the OpenTelemetry kind
 * @property {number} start Unix ns
 * @property {number|null} end Unix ns; null while running
 * @property {string} status unset / ok / error
 * @property {string} message
 * @property {number|null} run
 * @property {string} spanKind ours ("" when unknown)
 * @property {string} label
 * @property {string} outcome
 * @property {string} hook
 * @property {number|null} tin input tokens (a model call's)
 * @property {number|null} tout output tokens
 * @property {number|null} tcached cached input tokens (when the model reported them)
 * @property {number|null} tthinking thinking tokens (when the model reported them)
 * @property {number|null} cost US dollars, as the server priced it (null: no price, or no call)
 * @property {boolean} offline
 * @property {boolean} cancelled ended by its run's cancellation (the runtime marks it)
 * @property {string} decision what a guardrail decided on this step (allowed, blocked,
 *   redacted, unsafe, limit), "" for none
 */

/**
 * @typedef {Summary & {
 *   key: string, parent: SpanNode|null, children: SpanNode[], collapsed: boolean, orphan: boolean,
 *   depth: number, seq: number, ver: number, waiting: number|null, scored: {text: string, title: string, bad: boolean}|null, running: boolean,
 *   hit: number, keep: number, vi: number, vs: number, pos: number, size: number,
 *   row: import("../timeline/span_row.js").Row|null,
 * }} SpanNode  a span in the timeline's tree: its summary, its place in the tree and in the
 *   flattened rows, and the row showing it (span_tree.js's makeNode says what each field is)
 */

/**
 * A span's kind as the page names it ("other" when unknown), from full span data.
 *
 * @param {{name?: string, attributes?: Record<string, unknown>}} span
 * @returns {string}
 */
export function spanKind(span) {
  const attrs = span.attributes && typeof span.attributes === "object" ? span.attributes : {};
  return kindOf(attrs[KIND_ATTR], String(span.name || "")) || "other";
}

/**
 * @param {unknown} value
 * @param {number} [max] longest text kept, in characters (code points)
 * @returns {string} a string as it is, anything else as JSON, "" for nothing
 */
function text(value, max = TEXT_CHARS) {
  if (value === null || value === undefined) return "";
  const out = typeof value === "string" ? value : JSON.stringify(value) ?? "";
  return out.length > max ? firstChars(out, max) : out;
}

/**
 * The first `max` characters of `text` as the server cuts them (Python's `text[:max]`, in
 * agentdash/spans/summaries.py): by code points, a surrogate pair one character and a lone
 * surrogate one too. Reads `max` characters at most, whatever the text's length.
 *
 * @param {string} text
 * @param {number} max
 * @returns {string}
 */
function firstChars(text, max) {
  let end = 0;
  for (let n = 0; n < max && end < text.length; n += 1) {
    const unit = text.charCodeAt(end);
    const pair = unit >= 0xd800 && unit <= 0xdbff && (text.charCodeAt(end + 1) & 0xfc00) === 0xdc00;
    end += pair ? 2 : 1;
  }
  return text.slice(0, end);
}

/**
 * @param {unknown} value
 * @returns {number|null}
 */
function count(value) {
  if (value === null || value === undefined || value === "") return null;
  const n = Number(value);
  return Number.isInteger(n) ? n : null; // as the server's summaries: a count or nothing
}

/**
 * @param {unknown} value
 * @returns {number|null}
 */
function money(value) {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/**
 * A known decision, else "" (as the store fills its column: agentdash/spans/decisions.py).
 *
 * @param {unknown} value
 * @returns {string}
 */
function decisionOf(value) {
  return typeof value === "string" && DECISIONS.has(value) ? value : "";
}

/**
 * @param {unknown} value
 * @returns {boolean}
 */
function flag(value) {
  return value === true || value === 1 || String(value).toLowerCase() === "true";
}

/**
 * @param {unknown} value
 * @returns {number} 0 for what is no number
 */
function ns(value) {
  const n = Number(value);
  return Number.isFinite(n) ? n : 0;
}

/**
 * @param {unknown} value a run's id as the server sent it (a number), or nothing
 * @returns {number|null}
 */
function runId(value) {
  return value === null || value === undefined || value === "" ? null : /** @type {number} */ (value);
}

/**
 * The summary of a live `span` change: the `summary` the server made of it (the row its
 * summary pages have for the span, by field name: agentdash/spans/summaries.py), read as a
 * page's row is. The server sends one with every change; a change without one shows the
 * change's own fields of the same names (identity, timing, status) and the kind its name
 * says — never a second reading of its attributes.
 *
 * @param {Record<string, any>} data a `span` change's data
 * @returns {Summary & {seq: number}}
 */
export function summaryOfChange(data) {
  const made = data.summary;
  const row = made && typeof made === "object" && !Array.isArray(made) ? made : data;
  return summaryOfRow(Object.values(row), fieldIndex(Object.keys(row)));
}

/**
 * Where each field is in the rows of a summary page.
 *
 * @param {string[]} fields the page's `fields`
 * @returns {Record<string, number>}
 */
export function fieldIndex(fields) {
  /** @type {Record<string, number>} */
  const index = {};
  (Array.isArray(fields) ? fields : []).forEach((name, i) => {
    index[name] = i;
  });
  return index;
}

/**
 * The summary of one row of a page (endpoint 2), and its seq.
 *
 * @param {any[]} row
 * @param {Record<string, number>} ix from {@link fieldIndex}
 * @returns {Summary & {seq: number}}
 */
export function summaryOfRow(row, ix) {
  const at = (/** @type {string} */ name) => (ix[name] === undefined ? undefined : row[ix[name]]);
  const id = String(at("span_id"));
  const name = String(at("name") ?? "");
  const end = at("end_time");
  return {
    id,
    trace: String(at("trace_id") ?? ""),
    parentId: at("parent_span_id") ? String(at("parent_span_id")) : null,
    name,
    kind: String(at("kind") ?? ""),
    start: ns(at("start_time")),
    end: end === null || end === undefined ? null : ns(end),
    status: String(at("status") ?? "unset"),
    message: text(at("status_message"), MESSAGE_CHARS),
    run: runId(at("run_id")),
    spanKind: kindOf(at("span_kind"), name), // the server's, if one of ours (it guesses alike)
    label: text(at("label"), Infinity) || name || id,
    outcome: text(at("outcome")),
    hook: text(at("hook")),
    tin: count(at("tokens_in")),
    tout: count(at("tokens_out")),
    tcached: count(at("tokens_cached")),
    tthinking: count(at("tokens_thinking")),
    cost: money(at("cost_usd")),
    offline: flag(at("offline")),
    cancelled: flag(at("cancelled")),
    decision: decisionOf(at("decision")),
    seq: Number(at("seq")) || 0,
  };
}
