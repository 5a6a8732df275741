/**
 * The details of one span: its summary at once (from the tree), then its attributes and
 * events, from a bounded cache of full span data (recent live versions and earlier fetches)
 * or fetched (the session's span endpoint). All span text is untrusted: textContent only.
 *
 * @module dashboard/span_detail
 */

import { el } from "../../core/js/dom.js";
import { formatDuration, formatJson, formatNsTimestamp, nowNs } from "./format.js";
import { spanKey } from "./span_tree.js";

const CACHE_SIZE = 200;
const STATE_TEXT = {
  running: "running",
  ok: "ok",
  error: "error",
  unfinished: "unfinished (its run ended without its end)",
  cancelled: "cancelled",
};

/**
 * @typedef {object} Shown  what the pane is showing
 * @property {any} node the tree node
 * @property {string} state
 */

export class SpanDetail {
  /**
   * @param {object} parts
   * @param {HTMLElement} parts.root the pane (hidden while closed)
   * @param {((traceId: string, spanId: string) => Promise<any>)|null} parts.fetchSpan
   * @param {() => void} parts.onClose the user closed the pane
   */
  constructor({ root, fetchSpan, onClose }) {
    this.root = root;
    this.fetchSpan = fetchSpan;
    this.onClose = onClose;
    /** @type {Map<string, {data: any, seq: number}>} span key → full data, least recent first */
    this.cache = new Map();
    /** @type {Map<string, Promise<void>>} */
    this.loading = new Map();
    /** @type {any} */
    this.node = null;
    this.state = "";
    /** @type {Element|null} the duration cell, updated while the span runs */
    this.duration = null;
    this.attrsPart = el("div", { class: "detail-attrs" });
    // Built once: a refresh (a new version, a run ending) redraws the tables, never the
    // header, so keyboard focus on Close stays.
    this.title = el("h3");
    const close = el("button", { class: "link", text: "Close", attrs: { type: "button" } });
    close.addEventListener("click", () => this.onClose());
    this.head = el("header", { class: "detail-head", children: [this.title, close] });
    this.summary = el("div");
    this.attrsTitle = el("h4", { text: "Attributes" });
    root.addEventListener("keydown", (event) => {
      if (event.key === "Escape") {
        event.preventDefault();
        this.onClose();
      }
    });
  }

  /** @returns {string|null} the span shown, if any */
  get openId() {
    return this.node ? this.node.id : null;
  }

  /**
   * Keep a span's full data (a live version) if it is at least as new as the one kept; the
   * pane shows it if it is the span open.
   *
   * @param {any} data
   * @param {number} seq
   */
  remember(data, seq) {
    const key = spanKey(String(data.trace_id), String(data.span_id));
    const had = this.cache.get(key);
    if (had && had.seq > seq) return;
    this.cache.delete(key);
    this.cache.set(key, { data, seq });
    if (this.cache.size > CACHE_SIZE) this.cache.delete(this.cache.keys().next().value);
    if (this.node && this.node.key === key) this.drawAttributes();
  }

  /**
   * Show a span: its summary now, its attributes when known.
   *
   * @param {any} node
   * @param {string} state
   * @param {{scroll?: boolean}} [options]
   */
  show(node, state, { scroll = false } = {}) {
    const same = this.node === node;
    this.node = node;
    this.state = state;
    this.title.textContent = node.label || node.name || node.id;
    const summary = this.summaryTable();
    this.summary.replaceWith(summary);
    this.summary = summary;
    if (this.head.parentNode !== this.root) {
      this.root.replaceChildren(this.head, this.summary, this.attrsTitle, this.attrsPart);
    }
    this.root.dataset.spanId = node.id;
    this.root.dataset.state = state;
    this.root.hidden = false;
    if (!same || !this.attrsPart.firstChild) this.drawAttributes();
    this.load(node);
    if (scroll) this.root.scrollIntoView({ block: "nearest" });
  }

  /** The summary of the span shown changed (a new version, its run ended). */
  refresh(node, state) {
    if (this.node === node) this.show(node, state);
  }

  /** While the span shown runs: its duration. */
  tick(nowNs) {
    if (this.duration && this.node && this.state === "running") {
      this.duration.textContent = `${formatDuration(nowNs - this.node.start)} …`;
    }
  }

  close() {
    this.node = null;
    this.duration = null;
    this.root.hidden = true;
    this.attrsPart.replaceChildren();
  }

  /** @private */
  summaryTable() {
    const n = this.node;
    const end = n.end ?? null;
    let duration = "—";
    if (end !== null) duration = formatDuration(end - n.start);
    else if (this.state === "running") duration = `${formatDuration(nowNs() - n.start)} …`;
    const status = STATE_TEXT[this.state] || this.state;
    const rows = [
      ["name", n.name],
      ["status", n.message ? `${status}: ${n.message}` : status],
      ["duration", duration],
      ["start", formatNsTimestamp(n.start)],
      ["span_id", n.id],
      ["parent_span_id", n.parentId || "—"],
      ["trace_id", n.trace],
      ["run_id", n.run === null ? "—" : n.run],
      ["kind", n.kind],
    ];
    if (n.spanKind) rows.push(["agentdash kind", n.spanKind]);
    const table = kvTable(rows, "span");
    this.duration = table.querySelectorAll(".kv-value")[2] || null;
    return table;
  }

  /** @private Attributes and events of the span shown, from the cache. */
  drawAttributes() {
    const n = this.node;
    if (!n) return;
    const kept = this.cache.get(n.key);
    if (!kept) {
      const note = this.fetchSpan ? "Loading…" : "Not available.";
      this.attrsPart.replaceChildren(el("p", { class: "muted", text: note }));
      return;
    }
    const data = kept.data || {};
    const attrs = data.attributes && typeof data.attributes === "object" ? data.attributes : {};
    const entries = Object.entries(attrs).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    this.attrsPart.replaceChildren(
      entries.length ? kvTable(entries, "attributes") : el("p", { class: "muted", text: "None." }),
      ...eventsList(data.events),
    );
  }

  /** @private Fetch the full span unless the cache has this version. */
  load(node) {
    const kept = this.cache.get(node.key);
    if (!this.fetchSpan || (kept && kept.seq >= node.seq) || this.loading.has(node.key)) return;
    const job = Promise.resolve()
      .then(() => this.fetchSpan(node.trace, node.id))
      .then(
        (data) => {
          this.loading.delete(node.key);
          if (data && typeof data === "object") {
            this.remember(data, Number.isFinite(data.seq) ? data.seq : node.seq);
          } else if (this.node === node && !this.cache.has(node.key)) {
            this.attrsPart.replaceChildren(el("p", { class: "muted", text: "Not available: this span is gone." }));
          }
        },
        () => {
          this.loading.delete(node.key);
          if (this.node !== node) return;
          const retry = el("button", { class: "link", text: "Retry", attrs: { type: "button" } });
          retry.addEventListener("click", () => this.load(node));
          this.attrsPart.replaceChildren(
            el("p", { class: "muted", children: ["Could not load the details. ", retry] }),
          );
        },
      );
    this.loading.set(node.key, job);
  }
}

/** A two-column table; values that are not strings are shown as JSON. */
function kvTable(rows, label) {
  return el("table", {
    class: "kv",
    attrs: { "aria-label": label },
    children: [
      el("tbody", {
        children: rows.map(([key, value]) => {
          const text = formatJson(value ?? "");
          const multi = text.includes("\n") || text.length > 80;
          return el("tr", {
            children: [
              el("th", { text: key, attrs: { scope: "row" } }),
              el("td", { children: [el(multi ? "pre" : "span", { class: "kv-value", text })] }),
            ],
          });
        }),
      }),
    ],
  });
}

/** The span's events (exceptions, logs), if any. */
function eventsList(events) {
  if (!Array.isArray(events) || !events.length) return [];
  return [
    el("h4", { text: "Events" }),
    el("ul", {
      class: "span-events",
      children: events.map((event) =>
        el("li", {
          children: [
            el("strong", { text: String((event && event.name) || "event") }),
            el("pre", { class: "kv-value", text: formatJson((event && event.attributes) || {}) }),
          ],
        }),
      ),
    }),
  ];
}
