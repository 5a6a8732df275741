/**
 * The details pane, loaded when it is first needed. span_detail.js and its views are seven
 * modules the page does not need to show its chat and rows: they are fetched once the page is
 * idle, or at once when a span is opened before that. Until then this stands in for the pane:
 * it keeps the live versions (span_versions.js, handed to the pane) and the span to show.
 *
 * @module dashboard/span_detail_lazy
 */

import { el } from "../../../core/js/dom.js";
import { SpanVersions } from "../timeline/span_versions.js";

const IDLE_WAIT_MS = 3_000;

export class LazySpanDetail {
  /**
   * @param {object} parts the pane's parts, as SpanDetail takes them
   * @param {HTMLElement} parts.root
   * @param {((traceId: string, spanId: string) => Promise<any>)|null} parts.fetchSpan
   * @param {() => void} parts.onClose
   * @param {HTMLElement|null} [parts.extra]
   * @param {() => Promise<{SpanDetail: any}>} [load] fetches the pane's module
   */
  constructor(parts, load = () => import("./span_detail.js")) {
    this.versions = new SpanVersions();
    this.parts = { ...parts, versions: this.versions };
    this.root = parts.root;
    this.loadModule = load;
    /** @type {any} the pane, once loaded */
    this.pane = null;
    /** @type {Promise<void>|null} */
    this.loading = null;
    /** @type {{node: any, state: string, options: object}|null} the span to show */
    this.wanted = null;
    const idle = window.requestIdleCallback || ((run) => setTimeout(run, 200));
    idle(() => this.load(), { timeout: IDLE_WAIT_MS });
  }

  /** @returns {any} the span shown, or about to be */
  get node() {
    return this.pane ? this.pane.node : this.wanted && this.wanted.node;
  }

  /** @private Fetch the pane's modules (once); the span asked for meanwhile is shown. */
  load() {
    if (!this.loading) {
      this.loading = this.loadModule().then(({ SpanDetail }) => {
        const pane = new SpanDetail(this.parts);
        this.pane = pane;
        const wanted = this.wanted;
        this.wanted = null;
        if (wanted) pane.show(wanted.node, wanted.state, wanted.options);
      }, () => {
        this.loading = null; // the next opening tries again
        if (!this.wanted) return;
        this.wanted = null;
        const text = "The span's details could not be loaded (the server did not answer). Open the span again, or reload the page.";
        this.root.replaceChildren(el("p", { class: "detail-notice notice-error", text }));
        this.root.hidden = false;
      });
    }
    return this.loading;
  }

  /** @returns {Promise<void>} settled once the pane is loaded (or failed to) */
  ready() {
    return this.load().catch(() => {});
  }

  /** @param {any} data a span's full data @param {number} seq its version */
  remember(data, seq) {
    if (this.pane) this.pane.remember(data, seq);
    else this.versions.keep(data, seq);
  }

  /**
   * @param {import("../timeline/span_tree.js").SpanNode} node
   * @param {string} state
   * @param {{scroll?: boolean}} [options]
   */
  show(node, state, options = {}) {
    if (this.pane) {
      this.pane.show(node, state, options);
      return;
    }
    this.wanted = { node, state, options };
    this.load();
  }

  /** @param {import("../timeline/span_tree.js").SpanNode} node @param {string} state */
  refresh(node, state) {
    if (this.pane) this.pane.refresh(node, state);
    else if (this.wanted && this.wanted.node === node) this.wanted.state = state;
  }

  /** @param {number} nowNs */
  tick(nowNs) {
    if (this.pane) this.pane.tick(nowNs);
  }

  close() {
    this.wanted = null;
    if (this.pane) this.pane.close();
    else this.root.hidden = true;
  }
}
