/**
 * Finding spans in the timeline: which spans match a filter (text, kind, status, callback
 * outcome, minimum duration, a window their start falls in), and moving from match to match or error to error in tree
 * order. The tree then shows the matches and their ancestors only (SpanTree#flatten reads
 * `keepStamp`); rows mark a match (`node.hit`) and the ancestors kept for it (`node.keep`).
 *
 * Text matches what a row holds — name, label, hook, outcome, guardrail decision, status
 * message, span and trace id — and, once the server has answered for the same text, the
 * spans whose attributes or events hold it (`hits`, keys from `spans/search/`). Applying a
 * filter is one pass over the session's spans; while one is set and spans keep coming, the
 * pass runs again at most a few times a second (see Timeline).
 *
 * @module dashboard/span_find
 */

import { spanKey } from "./span_tree.js";

/**
 * @typedef {{text: string, kind: string, status: string, outcome: string, minMs: number,
 *   from: number, to: number}} Filter `from` and `to`: Unix ns a span's start is at or after,
 *   and before (0: no bound) — the Monitor's bucket a drill-down came from
 */
/** @typedef {import("./span_tree.js").SpanNode} SpanNode */

/** @returns {Filter} a filter that matches every span (and so is not applied) */
export function emptyFilter() {
  return { text: "", kind: "", status: "", outcome: "", minMs: 0, from: 0, to: 0 };
}

/** @param {Filter} filter @returns {boolean} whether it narrows anything */
export function isActive(filter) {
  return Boolean(filter.text || filter.kind || filter.status || filter.outcome || filter.minMs > 0
    || filter.from > 0 || filter.to > 0);
}

export class SpanFind {
  /** @param {import("./span_tree.js").SpanTree} data */
  constructor(data) {
    this.data = data;
    this.filter = emptyFilter();
    /** the filter's text in lower case */
    this.needle = "";
    /** @type {Set<string>|null} keys the server found for `hitsText` */
    this.hits = null;
    this.hitsText = "";
    this.count = 0;
    this.stamp = 0;
    /** @type {SpanNode[]|null} every span in tree order, collapsed or not (made when needed) */
    this.order = null;
  }

  /** @returns {boolean} */
  get active() {
    return isActive(this.filter);
  }

  /**
   * A new filter (kept until the next); its server hits are dropped when its text changed.
   *
   * @param {Filter} filter
   */
  setFilter(filter) {
    if (filter.text !== this.filter.text) {
      this.hits = null;
      this.hitsText = "";
    }
    this.filter = filter;
    this.needle = filter.text.toLowerCase();
  }

  /**
   * What the server found for `text` (ignored unless it is still the filter's text).
   *
   * @param {string} text
   * @param {[string, string][]} keys
   * @returns {boolean} whether they were taken
   */
  setHits(text, keys) {
    if (text !== this.filter.text) return false;
    this.hits = new Set(keys.map(([trace, id]) => spanKey(trace, id)));
    this.hitsText = text;
    return true;
  }

  /**
   * Mark the matches and their ancestors; reveal the matches (their ancestors expand) when
   * `reveal`. The tree's rows are to be derived again and redrawn.
   *
   * @param {{reveal?: boolean, now?: number}} [options]
   * @returns {number} how many spans match
   */
  apply({ reveal = false, now = Date.now() * 1e6 } = {}) {
    const data = this.data;
    this.stamp += 1;
    const stamp = this.stamp;
    let count = 0;
    if (this.active) {
      for (const node of data.nodes.values()) {
        if (!this.matches(node, now)) continue;
        count += 1;
        node.hit = stamp;
        node.keep = stamp;
        for (let up = node.parent; up && up.keep !== stamp; up = up.parent) {
          up.keep = stamp;
          if (reveal && up.collapsed) up.collapsed = false;
        }
      }
    }
    this.count = count;
    data.keepStamp = this.active ? stamp : 0;
    data.findText = this.filter.text ? this.needle : "";
    data.changed = true;
    data.epoch += 1; // every row repaints its mark
    return count;
  }

  /** @param {SpanNode} node @param {number} now Unix ns @returns {boolean} */
  matches(node, now) {
    const f = this.filter;
    const kind = node.spanKind || "other";
    if (f.kind && kind !== f.kind) return false;
    if (f.status && this.data.stateOf(node) !== f.status) return false;
    if (f.outcome && (node.outcome || (node.end === null ? "" : "passed")) !== f.outcome) return false;
    if (f.outcome && kind !== "callback") return false;
    if (f.minMs > 0 && ((node.end ?? now) - node.start) / 1e6 < f.minMs) return false;
    if ((f.from > 0 && node.start < f.from) || (f.to > 0 && node.start >= f.to)) return false;
    if (!f.text) return true;
    if (this.hits && this.hitsText === f.text && this.hits.has(node.key)) return true;
    const needle = this.needle;
    for (const value of [node.label, node.name, node.hook, node.outcome, node.decision, node.message, node.id, node.trace]) {
      if (value && String(value).toLowerCase().includes(needle)) return true;
    }
    return false;
  }

  /** The tree changed: the order is made again when next needed. */
  dataChanged() {
    this.order = null;
  }

  /**
   * The next (or previous) span after `from` in tree order, collapsed or not, for which
   * `test` holds; wraps around; null when none does.
   *
   * @param {SpanNode|null} from
   * @param {(node: SpanNode) => boolean} test
   * @param {number} [step] 1 forward, -1 back
   * @returns {SpanNode|null}
   */
  next(from, test, step = 1) {
    const order = this.treeOrder();
    const n = order.length;
    if (!n) return null;
    const at = from ? order.indexOf(from) : -1;
    let i = at < 0 ? (step > 0 ? -1 : n) : at;
    for (let k = 0; k < n; k += 1) {
      i = (i + step + n) % n;
      if (test(order[i])) return order[i];
    }
    return null;
  }

  /**
   * A match's place among the matches in tree order (1-based), 0 when `node` is not one.
   *
   * @param {SpanNode|null} node
   * @returns {number}
   */
  placeOf(node) {
    if (!node || node.hit !== this.stamp || !this.active) return 0;
    let place = 0;
    for (const each of this.treeOrder()) {
      if (each.hit === this.stamp) place += 1;
      if (each === node) return place;
    }
    return 0;
  }

  /** @param {SpanNode} node @returns {boolean} whether `node` matched the filter last applied */
  isHit(node) {
    return this.active && node.hit === this.stamp;
  }

  /** @private Every span, depth first, children by start. @returns {SpanNode[]} */
  treeOrder() {
    if (this.order) return this.order;
    const out = [];
    /** @type {SpanNode[]} */
    const stack = [];
    for (let r = this.data.roots.length - 1; r >= 0; r -= 1) stack.push(this.data.roots[r]);
    while (stack.length) {
      const node = /** @type {SpanNode} */ (stack.pop());
      out.push(node);
      for (let c = node.children.length - 1; c >= 0; c -= 1) stack.push(node.children[c]);
    }
    this.order = out;
    return out;
  }
}
