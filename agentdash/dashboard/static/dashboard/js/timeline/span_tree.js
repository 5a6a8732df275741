/**
 * The timeline's data: every span of the session as a compact summary node in a tree, with
 * no DOM. Parents hold their children sorted by start (ties by span id), inserted by binary
 * search; a child that arrives before its parent waits at the top level and is adopted when
 * the parent comes. A version of a span replaces the one held only when its seq is higher or
 * equal (docs/PROTOCOL.md: the later change wins). The rows to show — the tree flattened
 * without the children of collapsed nodes — are derived by {@link SpanTree#flatten}, which the
 * view calls at most once per frame; every other update costs O(log n) plus the changes.
 *
 * Attributes are never kept here: a node holds only what a row shows (span_summary.js).
 *
 * @module dashboard/span_tree
 */

import { isActive } from "../common/run_status.js";
import { insertSorted, makeNode, removeSorted, spanKey } from "./span_node.js";

export { spanKey };

/** @typedef {import("../common/span_summary.js").Summary} Summary @typedef {import("../common/span_summary.js").SpanNode} SpanNode */

/** The result of {@link SpanTree#upsert}. */
export const IGNORED = 0;
export const UPDATED = 1;
export const ADDED = 2;

export class SpanTree {
  constructor() {
    this.reset();
  }

  /** Forget everything. */
  reset() {
    /** @type {Map<string, SpanNode>} span key → node */
    this.nodes = new Map();
    /** @type {SpanNode[]} nodes with no parent (yet), by start */
    this.roots = [];
    /** @type {Map<string, SpanNode[]>} parent's key → children waiting for it */
    this.orphans = new Map();
    /** @type {Map<string, {id: string, start: number, end: number, count: number, running: number}>} */
    this.traces = new Map();
    /** @type {Map<any, Record<string, any>>} run id → run data */
    this.runs = new Map();
    /** @type {Map<any, Set<SpanNode>>} run id → its nodes that have no end */
    this.open = new Map();
    /** @type {Set<SpanNode>} nodes running now */
    this.running = new Set();
    /** @type {SpanNode[]} the rows: visible nodes in tree order */
    this.rows = [];
    /** @type {number} */ this.stamp = 0;
    /** @type {boolean} */ this.changed = true;
    /** @type {number} Bumped when rows may show differently without their own change (a
     * trace's start moved, a run changed): the view redraws its rows. */
    this.epoch = 0;
    /** @type {number} While a filter is set (span_find.js), the pass whose kept spans alone are rows. */
    this.keepStamp = 0;
    /** @type {string} The filter's text in lower case, for the rows to mark ("" when none). */
    this.findText = "";
  }

  get size() {
    return this.nodes.size;
  }

  /**
   * Mark a span as waiting for a person's approval since `since` (Unix ns), or not (null);
   * its row repaints.
   *
   * @param {SpanNode} node
   * @param {number|null} since
   */
  setWaiting(node, since) {
    node.waiting = since;
    node.ver += 1;
  }

  /**
   * Mark a span as scored (its row shows the mark), or not (null); its row repaints.
   *
   * @param {SpanNode} node
   * @param {{text: string, title: string, bad: boolean}|null} mark
   */
  setScored(node, mark) {
    node.scored = mark;
    node.ver += 1;
  }

  /**
   * Span versions not stored yet (a `spans` message, docs/PROTOCOL.md) as changes to apply:
   * each as of the seq its span has here (none yet: before any), so the stored change that
   * follows replaces it (and an open version never replaces an ended one: see upsert).
   *
   * @param {any[]} datas span data, as a `span` change's
   * @returns {{seq: number, kind: string, data: any}[]}
   */
  previewed(datas) {
    return (Array.isArray(datas) ? datas : [])
      .filter((data) => data && typeof data.span_id === "string")
      .map((data) => {
        const node = this.nodes.get(spanKey(String(data.trace_id), data.span_id));
        return { seq: node ? node.seq : -1, kind: "span", data };
      });
  }

  /**
   * Add a span or replace its summary. A version older than the one held (lower seq) is
   * ignored. Returns ADDED (the rows change), UPDATED (only the node's fields) or IGNORED.
   *
   * @param {Summary} s
   * @param {number} seq the version
   * @returns {number}
   */
  upsert(s, seq) {
    let node = this.nodes.get(spanKey(s.trace, s.id));
    let result = UPDATED;
    if (!node) {
      node = makeNode(s);
      this.nodes.set(node.key, node);
      result = ADDED;
    } else if (seq < node.seq || (node.end !== null && s.end === null)) {
      return IGNORED; // older, or open after its end (an ended span is final)
    } else if (s.start !== node.start) {
      this.detach(node); // a start never changes in practice; stay ordered if it does
      node.start = s.start;
      result = ADDED;
    }
    node.seq = seq;
    node.ver += 1;
    node.end = s.end;
    node.name = s.name;
    node.kind = s.kind;
    node.status = s.status;
    node.message = s.message;
    node.spanKind = s.spanKind;
    node.label = s.label;
    node.outcome = s.outcome;
    node.hook = s.hook;
    node.tin = s.tin;
    node.tout = s.tout;
    node.tcached = s.tcached;
    node.tthinking = s.tthinking;
    node.cost = s.cost;
    node.offline = s.offline;
    node.cancelled = s.cancelled;
    node.decision = s.decision;
    if (s.run !== node.run) {
      this.unopen(node);
      node.run = s.run;
    }
    if (result === ADDED) {
      if (node.ver === 1) this.traceAdd(node);
      this.attach(node);
      this.adopt(node);
      this.changed = true;
    }
    this.track(node);
    return result;
  }

  /**
   * A run's status. Returns whether the states of its spans may have changed.
   *
   * @param {Record<string, any>} run a `run` change's data
   * @returns {boolean}
   */
  applyRun(run) {
    const before = this.runs.get(run.id);
    this.runs.set(run.id, run);
    if (before && before.status === run.status && before.cancel_requested === run.cancel_requested) {
      return false;
    }
    for (const node of this.open.get(run.id) || []) this.track(node);
    this.epoch += 1;
    return true;
  }

  /**
   * What a row shows: "running" (no end, and its run active or of no run), "unfinished" (no
   * end and its run is over or unknown), "cancelled" (no end and its run cancelled, or ended by the cancellation:
   * `agentdash.cancelled`, set by the runtime on every span a cancel passes through), "error"
   * or "ok".
   *
   * @returns {"running"|"unfinished"|"cancelled"|"error"|"ok"}
   */
  stateOf(/** @type {SpanNode} */ node) {
    const run = node.run === null ? undefined : this.runs.get(node.run);
    if (node.end === null) {
      // The page is sent every run still active (PROTOCOL.md), so a run it does not know
      // has ended; a span of no run runs until it ends.
      if (node.run === null || (run && isActive(run.status))) return "running";
      if (!run) return "unfinished";
      return run.status === "cancelled" ? "cancelled" : "unfinished";
    }
    if (node.cancelled) return "cancelled";
    return node.status === "error" ? "error" : "ok";
  }

  /**
   * The extent of a trace in ms from its first start; a trace with running spans reaches
   * `now`.
   *
   * @param {string} traceId
   * @param {number} now Unix ns
   * @returns {number}
   */
  traceMs(traceId, now) {
    const trace = this.traces.get(traceId);
    if (!trace) return 0;
    const end = trace.running ? Math.max(trace.end, now) : trace.end;
    return Math.max(0, (end - trace.start) / 1e6);
  }

  /**
   * Rebuild the rows (visible nodes in tree order) with each node's depth, position among
   * its siblings and row index. O(visible rows); while a filter is set, only the spans it
   * kept are rows, and each expanded list is read whole.
   *
   * @returns {SpanNode[]}
   */
  flatten() {
    const out = this.rows;
    out.length = 0;
    this.stamp += 1;
    const stamp = this.stamp;
    const stack = /** @type {(SpanNode[]|number)[]} */ ([]); // pairs: a list, the index in it
    const keep = this.keepStamp;
    const kept = (/** @type {SpanNode[]} */ nodes) => (keep ? nodes.filter((node) => node.keep === keep) : nodes);
    let list = kept(this.roots);
    let i = 0;
    let depth = 0;
    for (;;) {
      if (i < list.length) {
        const node = list[i];
        i += 1;
        node.vi = out.length;
        node.vs = stamp;
        node.depth = depth;
        node.pos = i;
        node.size = list.length;
        out.push(node);
        if (!node.collapsed && node.children.length) {
          stack.push(list, i);
          list = kept(node.children);
          i = 0;
          depth += 1;
        }
      } else if (stack.length) {
        i = /** @type {number} */ (stack.pop());
        list = /** @type {SpanNode[]} */ (stack.pop());
        depth -= 1;
      } else {
        break;
      }
    }
    this.changed = false;
    return out;
  }

  /** Whether the last flatten showed `node`. */
  isShown(/** @type {SpanNode} */ node) {
    return node.vs === this.stamp && this.rows[node.vi] === node;
  }

  /**
   * Every span of a trace in tree order, collapsed or not (for the overview).
   *
   * @param {string} traceId
   * @param {(node: SpanNode, index: number) => void} visit
   */
  walkTrace(traceId, visit) {
    let index = 0;
    const stack = [];
    for (let r = this.roots.length - 1; r >= 0; r -= 1) {
      if (this.roots[r].trace === traceId) stack.push(this.roots[r]);
    }
    while (stack.length) {
      const node = /** @type {SpanNode} */ (stack.pop());
      visit(node, index);
      index += 1;
      for (let c = node.children.length - 1; c >= 0; c -= 1) stack.push(node.children[c]);
    }
  }

  /** @private Under its parent, or at the top level (waiting for it). @param {SpanNode} node */
  attach(node) {
    const parentKey = node.parentId === null ? null : spanKey(node.trace, node.parentId);
    const parent = parentKey === null ? undefined : this.nodes.get(parentKey);
    if (parent) {
      node.parent = parent;
      node.orphan = false;
      insertSorted(parent.children, node);
      return;
    }
    node.parent = null;
    if (node.parentId !== null) {
      node.orphan = true;
      const waiting = this.orphans.get(/** @type {string} */ (parentKey)); // not null: the node has a parent id
      if (waiting) waiting.push(node);
      else this.orphans.set(/** @type {string} */ (parentKey), [node]);
    }
    insertSorted(this.roots, node);
  }

  /** @private @param {SpanNode} node */
  detach(node) {
    if (node.parent) removeSorted(node.parent.children, node);
    else removeSorted(this.roots, node);
    if (node.orphan) {
      const parentKey = spanKey(node.trace, /** @type {string} */ (node.parentId)); // an orphan has one
      const waiting = this.orphans.get(parentKey) || [];
      const at = waiting.indexOf(node);
      if (at >= 0) waiting.splice(at, 1);
      if (!waiting.length) this.orphans.delete(parentKey);
    }
    node.parent = null;
    node.orphan = false;
  }

  /** @private The children that arrived before `parent` move under it (never making a cycle:
   * a child that is also an ancestor of `parent` stays at the top level). */
  adopt(/** @type {SpanNode} */ parent) {
    const waiting = this.orphans.get(parent.key);
    if (!waiting) return;
    this.orphans.delete(parent.key);
    const kept = [];
    for (const child of waiting) {
      let cycle = false;
      for (let up = /** @type {SpanNode|null} */ (parent); up; up = up.parent) {
        if (up === child) {
          cycle = true;
          break;
        }
      }
      if (cycle) {
        kept.push(child);
        continue;
      }
      removeSorted(this.roots, child);
      child.orphan = false;
      child.parent = parent;
      insertSorted(parent.children, child);
    }
    if (kept.length) this.orphans.set(parent.key, kept);
  }

  /** @private @param {SpanNode} node */
  traceAdd(node) {
    let trace = this.traces.get(node.trace);
    if (!trace) {
      trace = { id: node.trace, start: node.start, end: node.start, count: 0, running: 0 };
      this.traces.set(node.trace, trace);
    }
    trace.count += 1;
    if (node.start < trace.start) {
      trace.start = node.start;
      this.epoch += 1;
    }
  }

  /** @private Keep the trace's extent, the run's open spans and the running set right. */
  track(/** @type {SpanNode} */ node) {
    const trace = this.traces.get(node.trace);
    if (trace) {
      if (node.start < trace.start) {
        trace.start = node.start;
        this.epoch += 1;
      }
      if (node.end !== null && node.end > trace.end) trace.end = node.end;
    }
    if (node.end === null) {
      if (node.run !== null) {
        const open = this.open.get(node.run);
        if (open) open.add(node);
        else this.open.set(node.run, new Set([node]));
      }
    } else {
      this.unopen(node);
    }
    const running = this.stateOf(node) === "running";
    if (running !== node.running) {
      node.running = running;
      if (running) this.running.add(node);
      else this.running.delete(node);
      if (trace) trace.running += running ? 1 : -1;
    }
  }

  /** @private @param {SpanNode} node */
  unopen(node) {
    if (node.run === null) return;
    const open = this.open.get(node.run);
    if (open && open.delete(node) && !open.size) this.open.delete(node.run);
  }
}
