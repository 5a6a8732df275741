/**
 * The timeline's time: the waterfall's window and axis, the overview of one trace, the zoom
 * buttons and keys, and which trace they show (the selected span's, else the first row's in
 * view, else the longest). A part of the timeline (timeline.js), which tells it what is shown.
 *
 * @module dashboard/trace_axis
 */

import { onThemeChange } from "../../../core/js/theme.js";
import { nowNs } from "../common/format.js";
import { OTHER, SPAN_KINDS } from "../common/span_kinds.js";
import { Overview, Waterfall, paintTrace } from "./waterfall.js";

/** @typedef {import("./span_tree.js").SpanNode} SpanNode */
/** @typedef {import("./span_tree.js").SpanTree} SpanTree */

/** @type {Record<string, string>} the waterfall's colours: each kind's, and two states' */
const COLORS = Object.fromEntries([
  ...[...SPAN_KINDS].map(([kind, look]) => [kind, `--c-${look.colour}`]),
  ["other", `--c-${OTHER.colour}`],
  ["error", "--err"],
  ["stopped", "--line-strong"],
]);

export class TraceAxis {
  /**
   * @param {object} parts
   * @param {HTMLElement} parts.root the timeline panel (its zoom buttons, its colours)
   * @param {SpanTree} parts.data the timeline's spans
   * @param {HTMLElement} parts.ticks the axis's ticks
   * @param {HTMLElement} parts.label the axis's label
   * @param {HTMLElement} parts.overview the overview's host
   * @param {HTMLCanvasElement} parts.canvas the overview's canvas
   */
  constructor({ root, data, ticks, label, overview, canvas }) {
    this.root = root;
    this.data = data;
    this.label = label;
    /** @type {string|null} the trace the axis and the overview show */
    this.trace = null;
    this.labelFor = "";
    /** @type {Record<string, string>|null} */
    this.colors = null;
    this.waterfall = new Waterfall({ scope: root, ticks, onChange: () => this.syncOverview() });
    this.overview = new Overview({
      host: overview,
      canvas,
      paint: (ctx, w, h) => this.paint(ctx, w, h),
      onPick: (frac) => this.waterfall.center(frac * this.waterfall.extent),
    });
    const zooms = /** @type {Record<string, (() => void)|undefined>} */ ({
      out: () => this.waterfall.zoom(2),
      in: () => this.waterfall.zoom(0.5),
      fit: () => this.waterfall.fit(),
    });
    for (const button of root.querySelectorAll(".tl-zoom-button")) {
      const action = zooms[/** @type {HTMLElement} */ (button).dataset.zoom || ""];
      if (action) button.addEventListener("click", action);
    }
    // Another theme: the overview's colours are read again (paint) and repainted.
    onThemeChange(() => {
      this.colors = null;
      this.overview.request();
    });
  }

  /** A key of the tree's: "+", "-" or "0" zoom (true when it was one of them). @param {string} key */
  zoomKey(key) {
    if (key === "+" || key === "=") this.waterfall.zoom(0.5);
    else if (key === "-" || key === "_") this.waterfall.zoom(2);
    else if (key === "0") this.waterfall.fit();
    else return false;
    return true;
  }

  /** The wheel over the rows pans or zooms the window (true when it did). @param {WheelEvent} event */
  wheel(event) {
    return this.waterfall.wheel(event);
  }

  /** The spans changed: the overview is painted again. */
  changed() {
    this.overview.request();
  }

  /** While spans run: the shown trace's length grows. @param {number} now Unix ns */
  tick(now) {
    const trace = this.trace && this.data.traces.get(this.trace);
    if (trace && trace.running) {
      this.waterfall.setExtent(this.data.traceMs(trace.id, now));
      this.overview.request();
    }
  }

  /**
   * Show the selected span's trace, else the first row's in view, else the longest.
   * @param {SpanNode|null} selected @param {SpanNode|null} first
   */
  follow(selected, first) {
    let id = selected ? selected.trace : first ? first.trace : null;
    const now = nowNs();
    if (!id) {
      let longest = -1;
      for (const trace of this.data.traces.values()) {
        const length = this.data.traceMs(trace.id, now);
        if (length > longest) [id, longest] = [trace.id, length];
      }
    }
    if (id !== this.trace) {
      this.trace = id;
      this.overview.request();
    }
    this.waterfall.setExtent(id ? this.data.traceMs(id, now) : 0);
    this.syncOverview();
    this.labelAxis();
  }

  /** @private With more than one run, the axis says whose time it shows ("run 2 of 3"):
   * every run's bars have their own scale (waterfall.js). */
  labelAxis() {
    const traces = this.data.traces;
    const key = `${this.trace}|${traces.size}|${this.data.epoch}`;
    if (key === this.labelFor) return;
    this.labelFor = key;
    let text = "span";
    let title = "";
    if (this.trace && traces.size > 1) {
      const start = traces.get(this.trace)?.start ?? 0;
      let place = 1;
      for (const trace of traces.values()) if (trace.start < start) place += 1;
      text = `span · axis: run ${place} of ${traces.size}`;
      title = `The axis measures run ${place} (the selected span's, else the first in view); each run's bars are scaled to its own length`;
    }
    if (this.label.textContent !== text) this.label.textContent = text;
    this.label.title = title;
  }

  /** @private The window's frame on the overview. */
  syncOverview() {
    if (!this.waterfall || !this.overview) return; // while they are being made
    const { v0, vd, extent } = this.waterfall;
    if (extent > 0) this.overview.setWindow(v0 / extent, (v0 + vd) / extent);
    else this.overview.setWindow(0, 1);
  }

  /** @private @param {CanvasRenderingContext2D} ctx @param {number} w @param {number} h */
  paint(ctx, w, h) {
    const trace = this.trace ? this.data.traces.get(this.trace) : undefined;
    if (!trace) return;
    if (!this.colors) {
      const style = getComputedStyle(this.root);
      this.colors = {};
      for (const [name, property] of Object.entries(COLORS)) {
        this.colors[name] = style.getPropertyValue(property).trim() || style.color;
      }
    }
    const colorOf = (/** @type {SpanNode} */ node) => {
      const state = this.data.stateOf(node);
      if (state === "error") return "error";
      if (state === "cancelled" || state === "unfinished") return "stopped";
      return Object.hasOwn(COLORS, node.spanKind) ? node.spanKind : "other";
    };
    const now = nowNs();
    const walk = (/** @type {(node: SpanNode, index: number) => void} */ visit) => this.data.walkTrace(trace.id, visit);
    const extent = { count: trace.count, startNs: trace.start, ms: this.data.traceMs(trace.id, now), walk };
    paintTrace(ctx, w, h, extent, now, this.colors, colorOf);
  }
}
