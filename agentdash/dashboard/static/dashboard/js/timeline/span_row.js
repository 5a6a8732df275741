/**
 * One row of the timeline's tree: a pooled element, and how a span is put on it. Its place
 * (`--y`, the row index) and ARIA state change as the list scrolls; its content only when
 * the span or how it must be shown changed. Attributes and custom properties are written only
 * when their value changes; span text only through textContent.
 *
 * @module dashboard/span_row
 */

import { el } from "../../../core/js/dom.js";
import { formatDuration } from "../common/format.js";
import { kindLook } from "../common/span_kinds.js";
import { usageText, usageTitle } from "../common/usage.js";

const OUTCOMES = new Set(["passed", "overridden", "raised", "disabled"]);
/** Guardrail decisions a row shows ("allowed" is the usual case: nothing to show). */
const SHOWN_DECISIONS = new Set(["blocked", "redacted", "unsafe", "limit"]);
const NO_FIND = { match: null, text: "" };

/** @typedef {import("./span_tree.js").SpanNode} SpanNode */

/**
 * @typedef {object} Row  a pooled row element and its parts
 * @property {HTMLElement} el the treeitem
 * @property {HTMLElement} badge
 * @property {HTMLElement} name
 * @property {HTMLElement[]} meta four badges after the name, hidden when unused (the most a
 *   row shows: a callback's outcome, decision, hook and error; a model call's tokens,
 *   offline, decision and error)
 * @property {HTMLElement} duration
 * @property {import("./span_tree.js").SpanNode|null} node the span shown, or null
 * @property {number} ver the node version painted (-1: none)
 * @property {number} epoch the tree epoch painted
 * @property {Record<string, string|null>} attrs values written
 */

/** @returns {Row} a new row element and its parts (not in the document yet) */
export function makeRow() {
  const meta = [el("span"), el("span"), el("span"), el("span")];
  for (const part of meta) part.hidden = true;
  const badge = el("span", { class: "kind-badge" });
  const name = el("span", { class: "span-name" });
  const duration = el("span", { class: "span-duration" });
  const label = el("span", {
    class: "span-label",
    children: [
      el("span", { class: "twisty", attrs: { "aria-hidden": "true" } }),
      badge,
      name,
      el("span", { class: "span-meta", children: meta }),
    ],
  });
  const bar = el("span", { class: "span-bar", children: [el("span", { class: "bar-fill" })] });
  const node = el("div", {
    class: "span",
    attrs: { role: "treeitem", tabindex: "-1" },
    children: [el("div", { class: "span-row", children: [label, bar, duration] })],
  });
  return { el: node, badge, name, meta, duration, node: null, ver: -1, epoch: -1, attrs: {} };
}

/**
 * The row's place and ARIA state (every frame it is in view; cheap when nothing changed).
 *
 * @param {Row} row
 * @param {SpanNode} node
 * @param {{active: boolean, selected: boolean}} flags
 */
export function placeRow(row, node, { active, selected }) {
  if (row.el.hidden) row.el.hidden = false;
  setVar(row, "--y", String(node.vi));
  setVar(row, "--depth", String(node.depth));
  setAttr(row, "aria-level", String(node.depth + 1));
  setAttr(row, "aria-setsize", String(node.size));
  setAttr(row, "aria-posinset", String(node.pos));
  setAttr(row, "aria-expanded", node.children.length ? String(!node.collapsed) : null);
  setAttr(row, "aria-selected", String(selected));
  setAttr(row, "tabindex", active ? "0" : "-1");
}

/**
 * The row's content: kind, name, badges, bar and duration.
 *
 * @param {Row} row
 * @param {SpanNode} node
 * @param {string} state from SpanTree#stateOf
 * @param {{start: number, end: number}|undefined} trace the span's trace (its extent)
 * @param {number} now Unix ns
 * @param {{match: "hit"|"context"|null, text: string}} [find] while a filter is set: a match,
 *   or an ancestor kept for one; the filter's text (lower case) to mark in the name
 */
export function paintRow(row, node, state, trace, now, find = NO_FIND) {
  const kind = node.spanKind || "other";
  setAttr(row, "data-span-id", node.id);
  setAttr(row, "data-kind", kind);
  setAttr(row, "data-state", state);
  setAttr(row, "data-name", node.name);
  setAttr(row, "data-orphan", node.orphan ? "" : null);
  setAttr(row, "title", (state === "error" || state === "cancelled") && node.message ? node.message : null);
  const look = kindLook(kind);
  row.badge.textContent = look.label;
  setVar(row, "--kind", `var(--c-${look.colour})`); // the badge's and the bar's colour
  setVar(row, "--kind-bg", `var(--c-${look.colour}-bg)`);
  setAttr(row, "data-match", find.match);
  paintName(row.name, node.label, find.match === "hit" ? find.text : "");
  row.name.title = node.name;
  paintMeta(row, node, state, kind, now);
  const start = trace ? trace.start : node.start;
  setVar(row, "--s", ms(node.start - start));
  setVar(row, "--d", ms(barEnd(node, state, trace, now) - node.start));
  row.duration.textContent = durationText(node, state, now);
}

/**
 * The length of the row's trace (`--e`): each run's bars have their own scale. Written on
 * every frame the row is in view and every tick while the trace runs; a no-op when the same.
 *
 * @param {Row} row
 * @param {{start: number, end: number, running: number}|undefined} trace
 * @param {number} now Unix ns
 */
export function paintExtent(row, trace, now) {
  const end = trace ? (trace.running ? Math.max(trace.end, now) : trace.end) : 0;
  setVar(row, "--e", trace ? ms(Math.max(end - trace.start, 1_000)) : "1");
}

/**
 * A running span's bar and clock (the timer's only work on a row).
 *
 * @param {Row} row
 * @param {SpanNode} node
 * @param {number} now Unix ns
 */
export function paintRunning(row, node, now) {
  setVar(row, "--d", ms(now - node.start));
  row.duration.textContent = formatDuration(now - node.start);
}

/**
 * Out of view: hidden, its span forgotten, and no stale state left for selectors to find.
 *
 * @param {Row} row
 */
export function hideRow(row) {
  if (row.node && row.node.row === row) row.node.row = null;
  row.node = null;
  if (row.el.hidden) return;
  row.el.hidden = true;
  row.ver = -1;
  for (const name of ["data-span-id", "data-state", "data-kind", "data-name", "data-match"]) setAttr(row, name, null);
  setAttr(row, "tabindex", "-1");
}

/**
 * The name, with the filter's text in it marked (`<mark>`, text nodes only).
 *
 * @param {HTMLElement} name
 * @param {string} label
 * @param {string} needle the filter's text in lower case ("": none)
 */
function paintName(name, label, needle) {
  const text = String(label);
  const lower = needle ? text.toLowerCase() : "";
  // Lower case may change a string's length (e.g. "İ"): then offsets would not line up.
  const at = needle && lower.length === text.length ? lower.indexOf(needle) : -1;
  if (at < 0) {
    if (name.firstElementChild || name.textContent !== text) name.textContent = text;
    return;
  }
  const end = at + needle.length;
  name.replaceChildren(
    text.slice(0, at),
    el("mark", { text: text.slice(at, end) }),
    text.slice(end),
  );
}

/**
 * A tool call waiting for approval, a callback's outcome and hook, a model call's tokens, a
 * guardrail's decision (any kind), an error or a cancellation, its scores (the first four shown).
 *
 * @param {Row} row
 * @param {SpanNode} node
 * @param {string} state
 * @param {string} kind
 * @param {number} now Unix ns
 */
function paintMeta(row, node, state, kind, now) {
  /** @type {[cls: string, text: string, title?: string][]} */
  const parts = [];
  if (node.waiting !== null && node.waiting !== undefined) {
    const waited = formatDuration(Math.max(0, now - node.waiting));
    parts.push(["outcome outcome-waiting", `waiting ${waited}`, "waiting for a person's approval"]);
  }
  /** @type {[string, string, string]|null} */
  const decision = SHOWN_DECISIONS.has(node.decision)
    ? [`decision decision-${node.decision}`, node.decision, `guardrail decision: ${node.decision}`]
    : null;
  if (kind === "callback") {
    // A guardrail's decision says more than "overridden": it takes the outcome's place.
    const outcome = node.outcome || (node.end === null ? "" : "passed");
    if (decision) parts.push(decision);
    else if (outcome) parts.push([`outcome outcome-${OUTCOMES.has(outcome) ? outcome : "other"}`, outcome]);
    if (node.hook) parts.push(["tag", node.hook]);
  } else {
    if (kind === "model") {
      if (node.tin !== null || node.tout !== null) {
        const usage = { input: node.tin, output: node.tout, cached: node.tcached, thinking: node.tthinking, cost_usd: node.cost };
        parts.push(["tokens", usageText(usage), usageTitle(usage)]);
      }
      if (node.offline && node.label !== "offline") parts.push(["tag tag-offline", "offline"]);
    }
    if (decision) parts.push(decision);
  }
  if (state === "error") parts.push(["outcome outcome-raised", "error"]);
  else if (state === "cancelled") parts.push(["outcome outcome-cancelled", "cancelled"]);
  if (node.scored) parts.push([node.scored.bad ? "score-mark score-bad" : "score-mark", node.scored.text, node.scored.title]);
  row.meta.forEach((part, i) => {
    const want = parts[i];
    part.hidden = !want;
    if (!want) return;
    if (part.className !== want[0]) part.className = want[0];
    if (part.textContent !== want[1]) part.textContent = want[1];
    const title = want[2] ?? "";
    if (part.title !== title) part.title = title;
  });
}

/** @param {number} nanoseconds @returns {string} ms, for the CSS variables */
function ms(nanoseconds) {
  return (Math.max(0, nanoseconds) / 1e6).toFixed(3);
}

/**
 * Where a bar ends: its end, now while it runs, or its trace's last end when it never ended.
 *
 * @param {SpanNode} node
 * @param {string} state
 * @param {{end: number}|undefined} trace
 * @param {number} now Unix ns
 * @returns {number} Unix ns
 */
function barEnd(node, state, trace, now) {
  if (node.end !== null) return node.end;
  if (state === "running") return now;
  return Math.max(node.start, trace ? trace.end : node.start);
}

/** @param {SpanNode} node @param {string} state @param {number} now Unix ns @returns {string} */
function durationText(node, state, now) {
  if (node.end !== null) return formatDuration(node.end - node.start);
  return state === "running" ? formatDuration(now - node.start) : "—";
}

/**
 * Set an attribute (a name fixed here) only when its value changes; null removes it.
 *
 * @param {Row} row
 * @param {string} name
 * @param {string|null} value
 */
function setAttr(row, name, value) {
  if (row.attrs[name] === value) return;
  row.attrs[name] = value;
  if (value === null) row.el.removeAttribute(name);
  else row.el.setAttribute(name, value);
}

/** A custom property, set only when its value changes. @param {Row} row @param {string} name @param {string} value */
function setVar(row, name, value) {
  if (row.attrs[name] === value) return;
  row.attrs[name] = value;
  row.el.style.setProperty(name, value);
}
