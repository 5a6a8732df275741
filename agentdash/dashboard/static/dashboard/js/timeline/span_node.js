/**
 * A node of the timeline's span tree (span_tree.js): a span's summary plus its place in the
 * tree and the rows; and the sibling lists it sits in, sorted by start (ties by span id).
 * DOM-free.
 *
 * @module dashboard/span_node
 */

/**
 * A span's key: span ids are unique only within their trace (PROTOCOL.md).
 *
 * @param {string} traceId @param {string} spanId
 */
export function spanKey(traceId, spanId) {
  return `${traceId}:${spanId}`;
}

/** @typedef {import("../common/span_summary.js").Summary} Summary @typedef {import("../common/span_summary.js").SpanNode} SpanNode */

/** A tree node: a span's summary plus its place in the tree and the rows. @param {Summary} s @returns {SpanNode} */
export function makeNode(s) {
  return {
    id: s.id,
    trace: s.trace,
    key: spanKey(s.trace, s.id),
    parentId: s.parentId === s.id ? null : s.parentId,
    parent: null,
    children: [],
    collapsed: false,
    orphan: false,
    depth: 0,
    seq: -Infinity,
    ver: 0,
    start: s.start,
    end: s.end,
    name: "",
    kind: "",
    status: "",
    message: "",
    run: s.run,
    spanKind: "",
    label: "",
    outcome: "",
    hook: "",
    tin: null,
    tout: null,
    tcached: null,
    tthinking: null,
    cost: null,
    offline: false,
    cancelled: false,
    decision: "",
    /** @type {number|null} Unix ns a person's approval has been awaited since, or null */
    waiting: null,
    /** @type {{text: string, title: string, bad: boolean}|null} its scores' mark (Timeline#markScores) */
    scored: null,
    running: false,
    // Set by span_find.js: the filter pass that found it a match / kept it (0: none).
    hit: 0,
    keep: 0,
    // Set by flatten(): the row index, the flatten it belongs to, position among siblings.
    vi: -1,
    vs: 0,
    pos: 1,
    size: 1,
    /** the row showing it, if any (the view's) */ row: null,
  };
}

function before(/** @type {SpanNode} */ a, /** @type {SpanNode} */ b) {
  return a.start < b.start || (a.start === b.start && a.id < b.id);
}

/** Insert by binary search (appending, the common case, costs one comparison). */
export function insertSorted(/** @type {SpanNode[]} */ list, /** @type {SpanNode} */ node) {
  let lo = 0;
  let hi = list.length;
  if (hi === 0 || !before(node, list[hi - 1])) {
    list.push(node);
    return;
  }
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (before(node, list[mid])) hi = mid;
    else lo = mid + 1;
  }
  list.splice(lo, 0, node);
}

export function removeSorted(/** @type {SpanNode[]} */ list, /** @type {SpanNode} */ node) {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (before(list[mid], node)) lo = mid + 1;
    else hi = mid;
  }
  const at = list[lo] === node ? lo : list.indexOf(node);
  if (at >= 0) list.splice(at, 1);
}
