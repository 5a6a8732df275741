/**
 * Links into the session page. `?trace=<trace id>&span=<span id>` opens that span — its
 * ancestors expanded, scrolled to, its details open — as soon as it is loaded (`trace` may
 * be left out: the first span with that id); `?run=<run id>` opens the run's first span. The
 * address follows what is selected (opening a span adds it to the history, closing the
 * details too), so a copied address shows the same span, and the browser's back and forward
 * walk the selections.
 *
 * @module dashboard/span_links
 */

import { spanKey } from "./span_tree.js";

const SPAN = "span";
const TRACE = "trace";
const RUN = "run";
const ID = /^[0-9A-Za-z_-]{1,64}$/;

/** @typedef {import("./span_tree.js").SpanNode} SpanNode */

export class SpanLinks {
  /**
   * @param {object} options
   * @param {import("./timeline.js").Timeline} options.timeline
   * @param {(runId: string) => string|null} options.traceOfRun the trace of a run the page knows
   * @param {(text: string) => void} options.onMissing a link's span is not in the session
   */
  constructor({ timeline, traceOfRun, onMissing }) {
    this.timeline = timeline;
    this.traceOfRun = traceOfRun;
    this.onMissing = onMissing;
    /** @type {{span: string, trace: string, run: string}|null} what the address asks for, until shown */
    this.wanted = null;
    /** Selections made here (from the address) are not put in the history again. */
    this.following = false;
    timeline.on("select", (node) => this.selected(node));
    timeline.on("close", () => this.selected(null));
    timeline.on("data", () => this.resolve());
    addEventListener("popstate", () => this.follow());
  }

  /** Show what the page's address asks for (now, or once its span is loaded). */
  start() {
    this.follow();
  }

  /** Every span is loaded: a link whose span never came is told. */
  complete() {
    this.resolve();
    const wanted = this.wanted;
    if (!wanted) return;
    this.wanted = null;
    const what = wanted.run ? `run ${wanted.run}` : `span ${wanted.span}`;
    this.onMissing(`The linked ${what} is not in this session.`);
  }

  /**
   * The address of a span of this page (the current address with its span in the query).
   *
   * @param {SpanNode|null} node
   * @returns {URL}
   */
  urlOf(node) {
    const url = new URL(location.href);
    url.searchParams.delete(RUN);
    if (node) {
      url.searchParams.set(TRACE, node.trace);
      url.searchParams.set(SPAN, node.id);
    } else {
      url.searchParams.delete(TRACE);
      url.searchParams.delete(SPAN);
    }
    return url;
  }

  // ── private ─────────────────────────────────────────────────────────────────────────────

  /** @private The address changed (loaded, back, forward): show what it asks for. */
  follow() {
    const query = new URLSearchParams(location.search);
    const clean = (/** @type {string} */ name) => {
      const value = query.get(name) || "";
      return ID.test(value) ? value : "";
    };
    const wanted = { span: clean(SPAN), trace: clean(TRACE), run: clean(RUN) };
    if (!wanted.span && !wanted.run) {
      this.wanted = null;
      if (this.timeline.view.selected) this.quietly(() => this.timeline.closeDetails());
      return;
    }
    this.wanted = wanted;
    /** @type {{nodes: Map<string, SpanNode>, values: Iterator<SpanNode>, seen: number}|null} */
    this.scan = null; // a new link: look through every span again
    this.resolve();
  }

  /** @private If the wanted span is loaded, open it. */
  resolve() {
    const wanted = this.wanted;
    if (!wanted) return;
    const node = wanted.run ? this.rootOfRun(wanted.run) : this.spanOf(wanted.span, wanted.trace);
    if (!node) return;
    this.wanted = null;
    this.quietly(() => this.timeline.select(node.trace, node.id));
    // The address names the span fully from now on (a run's or an id-only link).
    const url = this.urlOf(node);
    if (url.href !== location.href) history.replaceState(history.state, "", url);
  }

  /** @private A span opened or the details closed: a new place in the history. @param {SpanNode|null} node */
  selected(node) {
    if (this.following) return;
    this.wanted = null;
    const url = this.urlOf(node);
    if (url.href !== location.href) history.pushState(null, "", url);
  }

  /** @private Run `action` without putting what it selects in the history. @param {() => void} action */
  quietly(action) {
    this.following = true;
    try {
      action();
    } finally {
      this.following = false;
    }
  }

  /** @private The span named, if loaded. By id alone: only the spans not looked at before
   * (a Map's iterator goes on with what is added after it), so waiting for a link while
   * 50,000 spans load costs one pass, not one per page.
   * @param {string} spanId @param {string} traceId ("": any trace) @returns {SpanNode|null} */
  spanOf(spanId, traceId) {
    const nodes = this.timeline.data.nodes;
    if (traceId) return nodes.get(spanKey(traceId, spanId)) || null;
    if (!this.scan || this.scan.nodes !== nodes || this.scan.seen > nodes.size) {
      this.scan = { nodes, values: nodes.values(), seen: 0 };
    }
    const scan = this.scan;
    while (scan.seen < nodes.size) {
      const node = scan.values.next().value;
      scan.seen += 1;
      if (node && node.id === spanId) return node;
    }
    return null;
  }

  /** @private The run's first top-level span (its invocation). @param {string} runId @returns {SpanNode|null} */
  rootOfRun(runId) {
    const trace = this.traceOfRun(runId);
    if (!trace) return null;
    for (const node of this.timeline.data.roots) {
      if (node.trace === trace && !node.orphan) return node;
    }
    return null;
  }
}
