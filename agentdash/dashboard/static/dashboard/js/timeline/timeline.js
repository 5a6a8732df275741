/**
 * The live timeline of the session page: every span of the session in a virtualized tree
 * with a waterfall, a time axis, an overview of the focused trace and a details pane.
 *
 * The parts: span_summary.js (a span's row fields), span_tree.js (the tree as data),
 * tree_view.js and span_row.js (the rows on screen, keyboard and focus), trace_axis.js and
 * waterfall.js (time window, axis, overview), span_detail.js (one span in full, loaded on first use:
 * span_detail_lazy.js). This module builds them into
 * the panel and is the page's API: summary pages and live changes come in here, are taken
 * without blocking the page (pages in slices of a few ms), and the screen follows at most
 * once per animation frame. Running spans grow by a timer that touches only the rows in view.
 *
 * @module dashboard/timeline
 */

import { NodeMarks } from "./node_marks.js";
import { formatCount, nowNs } from "../common/format.js";
import { LazySpanDetail } from "../span_detail/span_detail_lazy.js";
import { fieldIndex, summaryOfChange, summaryOfRow } from "../common/span_summary.js";
import { IGNORED, SpanTree, spanKey } from "./span_tree.js";
import { ROW_H, TreeView } from "./tree_view.js";
import { TraceAxis } from "./trace_axis.js";

/** @typedef {import("./span_tree.js").SpanNode} SpanNode */
const TICK_MS = 100;
const WAIT_CLOCK_MS = 1_000;
const SLICE_MS = 10;
const FINISH_AT_ONCE = 5_000; // rows: a few ms
const PHONE = "(max-width: 600px)";
export class Timeline {
  /**
   * @param {object} options
   * @param {HTMLElement} options.root the `section.timeline-panel` (its parts: session.html)
   * @param {((traceId: string, spanId: string) => Promise<any>)|null} [options.fetchSpan] the
   *   full span (attributes, events, seq), or null when it is gone
   * @param {(node: any) => void} [options.onSelect] a span's details were opened
   * @param {() => void} [options.onComplete] every page is in and taken (see isComplete)
   * @param {HTMLElement|null} [options.detailExtra] the page's part of the details pane
   */
  constructor({ root, fetchSpan = null, onSelect, onComplete, detailExtra = null }) {
    this.root = root;
    this.data = new SpanTree();
    this.onComplete = onComplete || (() => {});
    /** @type {Record<"select"|"close"|"data", ((node?: any) => void)[]>} see {@link on} */
    this.listeners = { select: onSelect ? [onSelect] : [], close: [], data: [] };
    /** @type {{ix: Record<string, number>, rows: any[][], at: number}[]} pages being taken */
    this.queue = [];
    this.drainTimer = 0;
    this.expected = 0;
    this.isLoaded = false;
    this.completeTold = false;
    /** @type {{key: string, traceId: string, spanId: string, scroll: boolean}|null} a select() waiting for its span */
    this.pending = null;
    this.frameId = 0;
    this.ticker = 0;
    this.countDirty = true;
    this.detailKey = "";
    /** @type {Map<string, number>} span key → Unix ns it has waited since (markWaiting) */
    this.waiting = new Map();
    this.waitClock = 0;
    /** @type {NodeMarks<{text: string, title: string, bad: boolean}>} the scores' marks (markScores) */
    this.scoreMarks = new NodeMarks(this.data, (node, mark) => this.data.setScored(node, mark), (node) => node.scored);
    this.build(fetchSpan, detailExtra);
  }

  // ── the page's API ──────────────────────────────────────────────────────────────────────

  /**
   * A page of span summaries (the session's `spans/` endpoint): queued, taken in slices.
   *
   * @param {string[]} fields
   * @param {any[][]} rows
   */
  loadRows(fields, rows) {
    if (!Array.isArray(rows) || !rows.length) return;
    this.queue.push({ ix: fieldIndex(fields), rows, at: 0 });
    if (!this.drainTimer) this.drain();
  }

  /**
   * Live span changes `{seq, kind: "span", data}` (full data; the item's seq is its version).
   * A version older than the one held is ignored.
   *
   * @param {{seq: number, kind: string, data: any}[]} items
   */
  applySpans(items) {
    let changed = false;
    for (const { seq, kind, data } of items) {
      if (kind !== "span" || !data || typeof data.span_id !== "string") continue;
      // A change too large for one message comes without its attributes (PROTOCOL.md): its
      // summary, made by the server from the whole span, is whole; its details are read
      // from the server when opened.
      const trimmed = Boolean(data.attributes && data.attributes["agentdash.truncated"]);
      const summary = summaryOfChange(data);
      if (this.data.upsert(summary, seq) === IGNORED) continue;
      if (!trimmed) this.detail.remember(data, seq);
      changed = true;
    }
    if (changed) this.dataChanged();
  }

  /** Span versions not stored yet (a `spans` message): SpanTree.previewed. @param {any[]} datas */
  applyPreviews(datas) {
    this.applySpans(this.data.previewed(datas));
  }

  /**
   * A run's status: a finished run's spans without an end stop their clocks ("unfinished", or
   * "cancelled" for a cancelled run).
   *
   * @param {{id: any, status: string, cancel_requested?: boolean}} run
   */
  applyRun(run) {
    if (!run || run.id === null || run.id === undefined) return;
    if (this.data.applyRun(run)) this.dataChanged();
  }

  /**
   * The tool calls that wait for a person's approval: their rows show "waiting" and how long
   * (a span loaded later gets its mark when it comes). Replaces the marks set before.
   *
   * @param {{trace: string, id: string, since: number}[]} marks since: Unix ns
   */
  markWaiting(marks) {
    const next = new Map(marks.map((m) => [spanKey(String(m.trace), String(m.id)), Number(m.since)]));
    for (const key of this.waiting.keys()) {
      const node = this.data.nodes.get(key);
      if (node && !next.has(key)) this.data.setWaiting(node, null);
    }
    this.waiting = next;
    this.applyWaiting();
    if (next.size && !this.waitClock) {
      this.waitClock = setInterval(() => this.applyWaiting(true), WAIT_CLOCK_MS);
    } else if (!next.size && this.waitClock) {
      clearInterval(this.waitClock);
      this.waitClock = 0;
    }
    this.requestFrame();
  }

  /**
   * The spans that were scored: their rows show a mark (a span loaded later gets its mark
   * when it comes). Replaces the marks set before.
   *
   * @param {Map<string, {text: string, title: string, bad: boolean}>} marks span key → mark
   */
  markScores(marks) {
    this.scoreMarks.set(marks);
    this.requestFrame();
  }

  /** @private Put the waiting marks on their nodes; `clock`: repaint them (their time grew). */
  applyWaiting(clock = false) {
    for (const [key, since] of this.waiting) {
      const node = this.data.nodes.get(key);
      if (node && (clock || node.waiting !== since)) this.data.setWaiting(node, since);
    }
    if (clock) this.requestFrame();
  }

  /** @param {number} total the session's spans when the snapshot was read */
  setExpected(total) {
    this.expected = Number(total) || 0;
    this.countDirty = true;
    this.requestFrame();
  }

  /** Every page is in. What is left of the last page is taken now when it is small (so
   * that isComplete holds on return), else in slices (see {@link isComplete}, onComplete). */
  loaded() {
    this.isLoaded = true;
    const left = this.queue.reduce((sum, job) => sum + job.rows.length - job.at, 0);
    if (left && left <= FINISH_AT_ONCE) {
      clearTimeout(this.drainTimer);
      this.drain(Infinity);
    } else {
      this.dataChanged();
    }
  }

  /** @returns {boolean} every page is in and taken */
  get isComplete() {
    return this.isLoaded && !this.queue.length;
  }

  /**
   * Show a span: expand its ancestors, scroll to it, select it and open its details. A span
   * not here yet is shown when it arrives.
   *
   * @param {string} traceId
   * @param {string} spanId
   * @param {{scroll?: boolean}} [options]
   * @returns {boolean} whether the span was here
   */
  select(traceId, spanId, { scroll = true } = {}) {
    const key = spanKey(String(traceId), String(spanId));
    const node = this.data.nodes.get(key);
    if (!node) {
      this.pending = { key, traceId, spanId, scroll };
      return false;
    }
    this.pending = null;
    this.view.reach(node, scroll);
    this.open(node);
    return true;
  }

  /**
   * Hear of the timeline: "select" (a span's details opened; the span's node), "close" (the
   * details closed), "data" (spans or runs changed).
   *
   * @param {"select"|"close"|"data"} what
   * @param {(node?: any) => void} listener
   */
  on(what, listener) {
    this.listeners[what].push(listener);
  }

  // ── building ────────────────────────────────────────────────────────────────────────────

  /** @private The panel's parts (session.html) and the pieces that drive them. */
  build(
    /** @type {((traceId: string, spanId: string) => Promise<any>)|null} */ fetchSpan,
    /** @type {HTMLElement|null} */ extra,
  ) {
    const root = this.root;
    const part = (/** @type {string} */ selector) => /** @type {HTMLElement} */ (root.querySelector(selector));
    /** @type {HTMLElement} */ this.count = part("#span-count");
    /** @type {HTMLElement} */ this.tree = part("#span-tree");
    /** @type {HTMLElement} */ this.empty = part("#timeline-empty");
    const body = part(".timeline-body");
    const axis = part(".tl-axis");
    const ticks = part(".tl-ticks");
    root.style.setProperty("--row-h", `${ROW_H}px`);
    /** @type {TraceAxis} */ this.axis = new TraceAxis({
      root,
      data: this.data,
      ticks,
      label: part(".tl-axis-label"),
      overview: part(".tl-overview"),
      canvas: /** @type {HTMLCanvasElement} */ (part(".tl-minimap")),
    });
    /** @type {LazySpanDetail} */ this.detail = new LazySpanDetail({ root: part("#span-detail"), fetchSpan, extra, onClose: () => this.closeDetails() });
    /** @type {TreeView} */ this.view = new TreeView({
      tree: this.tree,
      body,
      axis,
      data: this.data,
      requestFrame: () => this.requestFrame(),
      onOpen: (node) => this.open(node),
      onEscape: () => this.escape(),
      onKey: (key) => this.axis.zoomKey(key),
    });
    body.addEventListener("wheel", (event) => {
      if (this.axis.wheel(event)) event.preventDefault();
    }, { passive: false });
    this.requestFrame();
  }

  // ── frames ──────────────────────────────────────────────────────────────────────────────

  /** The screen follows in the next animation frame (one frame however often asked). */
  requestFrame() {
    if (!this.frameId) this.frameId = requestAnimationFrame(() => this.frame());
  }

  /** @private The screen follows the data: rows, axis, count, details. */
  frame() {
    this.frameId = 0;
    this.view.frame();
    this.axis.follow(this.view.selected, this.view.first);
    if (this.countDirty) this.drawCount();
    const shown = this.detail.node;
    if (shown) {
      const key = `${shown.ver}:${this.data.epoch}`;
      if (key !== this.detailKey) {
        this.detailKey = key;
        this.detail.refresh(shown, this.data.stateOf(shown));
      }
    }
  }

  /** @private The label ("50,000 spans · 3 running", or how far loading is) and the tree's
   * data-spans / data-running / data-complete and aria-busy. */
  drawCount() {
    this.countDirty = false;
    const n = this.data.size;
    const running = this.data.running.size;
    let text = "";
    if (!this.isLoaded && this.expected > n) {
      text = `Loading ${formatCount(n)} of ${formatCount(this.expected)} spans…`;
    } else if (n) {
      text = `${formatCount(n)} span${n === 1 ? "" : "s"}`;
      if (running) text += ` · ${formatCount(running)} running`;
    }
    if (this.count.textContent !== text) this.count.textContent = text;
    this.empty.hidden = n > 0;
    const tree = this.tree;
    tree.dataset.spans = String(n);
    tree.dataset.running = String(running);
    tree.dataset.complete = String(this.isComplete);
    const busy = String(this.expected > 0 && !this.isComplete); // the announced pages still coming
    if (tree.getAttribute("aria-busy") !== busy) tree.setAttribute("aria-busy", busy);
  }

  // ── data arriving ───────────────────────────────────────────────────────────────────────

  /** @private Take queued page rows for a few ms, then yield to the page. */
  drain(slice = SLICE_MS) {
    this.drainTimer = 0;
    const deadline = performance.now() + slice;
    let taken = 0;
    while (this.queue.length) {
      const job = this.queue[0];
      const idAt = job.ix.span_id;
      while (job.at < job.rows.length) {
        const row = job.rows[job.at];
        job.at += 1;
        if (Array.isArray(row) && row[idAt] !== null && row[idAt] !== undefined) {
          const summary = summaryOfRow(row, job.ix);
          this.data.upsert(summary, summary.seq);
        }
        taken += 1;
        if ((taken & 63) === 0 && performance.now() > deadline) {
          this.drainTimer = setTimeout(() => this.drain(), 0);
          this.dataChanged();
          return;
        }
      }
      this.queue.shift();
    }
    this.dataChanged();
  }

  /** @private */
  dataChanged() {
    this.countDirty = true;
    if (this.waiting.size) this.applyWaiting();
    if (this.scoreMarks.size) this.scoreMarks.apply();
    for (const listener of this.listeners.data) listener();
    if (this.pending && this.data.nodes.has(this.pending.key)) {
      const { traceId, spanId, scroll } = this.pending;
      this.select(traceId, spanId, { scroll });
    }
    if (this.data.running.size && !this.ticker) this.ticker = setInterval(() => this.tick(), TICK_MS);
    this.axis.changed();
    this.requestFrame();
    if (!this.completeTold && this.isComplete) {
      this.completeTold = true;
      this.onComplete();
    }
  }

  /** @private While spans run: their rows in view, the details, the axis; stops when none. */
  tick() {
    if (!this.data.running.size) {
      clearInterval(this.ticker);
      this.ticker = 0;
      this.countDirty = true;
      this.requestFrame();
      return;
    }
    const now = nowNs();
    this.view.tick(now);
    this.detail.tick(now);
    this.axis.tick(now);
  }

  // ── details ─────────────────────────────────────────────────────────────────────────────

  /** @private Select a row and show its details at once (from its summary). */
  open(/** @type {SpanNode} */ node) {
    const view = this.view;
    view.selected = node;
    view.active = node;
    this.detailKey = `${node.ver}:${this.data.epoch}`;
    this.detail.show(node, this.data.stateOf(node), { scroll: window.matchMedia(PHONE).matches });
    view.render();
    this.requestFrame();
    for (const listener of this.listeners.select) listener(node);
  }

  /** @private Esc in the tree: closes the details, if open. */
  escape() {
    if (!this.view.selected) return false;
    this.closeDetails();
    return true;
  }

  /** Close the details, if open (the row keeps the keyboard if the details had it). */
  closeDetails() {
    const inside = this.detail.root.contains(document.activeElement);
    this.view.selected = null;
    this.detail.close();
    this.view.render();
    if (inside) this.view.focusActive();
    this.requestFrame();
    for (const listener of this.listeners.close) listener();
  }
}
