/**
 * The details of one span: its summary at once (from the tree), then — from a bounded cache
 * of full span data (recent live versions and earlier fetches) or fetched (the session's span
 * endpoint) — a view made for its kind (a model call as the conversation the model saw, a
 * tool call's arguments and result, a callback's outcome and what it returned:
 * span_detail_model.js, span_detail_tool.js, span_detail_callback.js) under what a guardrail
 * decided on it (any kind: span_detail_parts.js guardrailSection), its events, for a span
 * from outside its links and who sent it (span_detail_source.js), and its raw attributes (a table labelled "attributes", in a collapsed section for the kinds that
 * have a view). Under the header, the span's status and duration come first, its ids after
 * its content. All span text is untrusted: textContent only, and never more of a value than
 * span_detail_value.js allows.
 *
 * @module dashboard/span_detail
 */

import { el } from "../../../core/js/dom.js";
import { formatClock, formatCount, formatDuration, formatNsTimestamp, nowNs } from "../common/format.js";
import { callbackView } from "./span_detail_callback.js";
import { modelView } from "./span_detail_model.js";
import { facts, guardrailSection, notice } from "./span_detail_parts.js";
import { attributesTable, eventsList, plainTable } from "./span_detail_tables.js";
import { sourceSections } from "./span_detail_source.js";
import { toolView } from "./span_detail_tool.js";
import { spanKind } from "../common/span_summary.js";
import { SpanVersions } from "../timeline/span_versions.js";

/** @type {Record<string, string|undefined>} */
const STATE_TEXT = {
  running: "running",
  ok: "ok",
  error: "error",
  unfinished: "unfinished (its run ended without its end)",
  cancelled: "cancelled",
};
/**
 * The view of each kind of span that has one.
 *
 * @type {Record<string, ((data: Record<string, any>, draw: Draw & {node: any}) => Array<Node|null>)|undefined>}
 */
const VIEWS = { model: modelView, tool: toolView, callback: callbackView };

/** @typedef {import("./span_detail_parts.js").Draw} Draw */
/** @typedef {import("../timeline/span_tree.js").SpanNode} SpanNode */

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
   * @param {SpanVersions} [parts.versions] the full data seen so far (kept before the pane)
   * @param {HTMLElement|null} [parts.extra] the page's own part, shown under the status line
   *   (the span's scores), kept by its owner
   */
  constructor({ root, fetchSpan, onClose, versions = new SpanVersions(), extra = null }) {
    this.root = root;
    this.fetchSpan = fetchSpan;
    this.onClose = onClose;
    this.cache = versions;
    /** @type {Map<string, Promise<void>>} */
    this.loading = new Map();
    /** @type {any} */
    this.node = null;
    this.state = "";
    /** @type {Element[]} where the duration is shown, updated while the span runs */
    this.durations = [];
    /** The content drawn from the full span data: its view and events. */
    this.attrsPart = el("div", { class: "detail-body" });
    /** The raw attributes, drawn with the view. */
    this.rawPart = el("div", { class: "detail-raw" });
    this.extra = extra;
    /** @type {Set<string>} value blocks of the span shown that the reader expanded */
    this.expanded = new Set();
    /** @type {boolean|null} the reader's choice for the raw attributes (null: by kind) */
    this.rawOpen = null;
    // Built once: a refresh (a new version, a run ending) redraws the tables, never the
    // header, so keyboard focus on Close stays.
    this.title = el("h3");
    const close = el("button", { class: "link", text: "Close", attrs: { type: "button" } });
    close.addEventListener("click", () => this.onClose());
    this.head = el("header", { class: "detail-head", children: [this.title, close] });
    /** @type {HTMLElement} */
    this.status = el("div");
    /** @type {HTMLElement} */
    this.summary = el("div");
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
   * @param {boolean} [fetched] read from the server (not a live version)
   */
  remember(data, seq, fetched = false) {
    const key = this.cache.keep(data, seq, fetched);
    if (key !== null && this.node && this.node.key === key) this.drawAttributes();
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
    if (!same) this.expanded = new Set();
    this.node = node;
    this.state = state;
    this.title.textContent = node.label || node.name || node.id;
    this.durations = [];
    const status = this.statusLine();
    this.status.replaceWith(status);
    this.status = status;
    const summary = this.summaryTable();
    this.summary.replaceWith(summary);
    this.summary = summary;
    if (this.head.parentNode !== this.root) {
      const parts = [this.head, this.status, this.extra, this.attrsPart, this.summary, this.rawPart];
      this.root.replaceChildren(.../** @type {HTMLElement[]} */ (parts.filter(Boolean)));
    }
    this.root.dataset.spanId = node.id;
    this.root.dataset.traceId = node.trace;
    this.root.dataset.state = state;
    this.root.hidden = false;
    if (!same || !this.attrsPart.firstChild) this.drawAttributes();
    this.load(node);
    if (scroll) this.root.scrollIntoView({ block: "nearest" });
  }

  /** The summary of the span shown changed (a new version, its run ended). @param {SpanNode} node @param {string} state */
  refresh(node, state) {
    if (this.node === node) this.show(node, state);
  }

  /** While the span shown runs: its duration. @param {number} nowNs */
  tick(nowNs) {
    if (this.node && this.state === "running") {
      for (const cell of this.durations) cell.textContent = `${formatDuration(nowNs - this.node.start)} …`;
    }
  }

  close() {
    this.node = null;
    this.durations = [];
    this.root.hidden = true;
    this.attrsPart.replaceChildren();
    this.rawPart.replaceChildren();
    this.expanded = new Set();
  }

  /** @private The span's duration as text (ticking while it runs). */
  durationText() {
    const n = this.node;
    if (n.end !== null && n.end !== undefined) return formatDuration(n.end - n.start);
    return this.state === "running" ? `${formatDuration(nowNs() - n.start)} …` : "—";
  }

  /**
   * @private The span's status in words: a tool call that waits for a person says so (its
   * span has ended: the run paused there); an ended span without an error says whether its
   * status was set OK or left unset (OpenTelemetry's default: no error was recorded).
   */
  statusText() {
    const n = this.node;
    if (n.waiting !== null && n.waiting !== undefined) {
      return `waiting for a person's approval (since ${formatClock(n.waiting / 1e9)})`;
    }
    if (this.state === "ok" && n.status !== "ok") return "unset (ended without an error)";
    return STATE_TEXT[this.state] || this.state;
  }

  /** @private What the reader wants first: how the span went and how long it took. */
  statusLine() {
    const n = this.node;
    const status = this.statusText();
    const line = facts([["status", n.message ? `${status}: ${n.message}` : status], ["duration", this.durationText()]], "status");
    const part = el("div", { class: "detail-status", children: [line] });
    const cell = part.querySelector('[data-fact="duration"] dd');
    if (cell) this.durations.push(cell);
    return part;
  }

  /** @private The span's identity and timing, under its content. */
  summaryTable() {
    const n = this.node;
    const status = this.statusText();
    /** @type {[string, unknown][]} */
    const rows = [
      ["name", n.name],
      ["status", n.message ? `${status}: ${n.message}` : status],
      ["duration", this.durationText()],
      ["start", formatNsTimestamp(n.start)],
      ["span_id", n.id],
      ["parent_span_id", n.parentId || "—"],
      ["trace_id", n.trace],
      ["run_id", n.run === null ? "—" : n.run],
      ["kind", n.kind],
    ];
    if (n.spanKind) rows.push(["agentdash kind", n.spanKind]);
    const table = plainTable(rows, "span");
    const cell = table.querySelectorAll(".kv-value")[2];
    if (cell) this.durations.push(cell);
    return el("section", { class: "detail-span", children: [el("h4", { text: "Span" }), table] });
  }

  /** @private The view, events and raw attributes of the span shown, from the cache. A
   * redraw (a new version) keeps what the reader expanded and the focused control. */
  drawAttributes() {
    const n = this.node;
    if (!n) return;
    const kept = this.cache.get(n.key);
    if (!kept) {
      const note = this.fetchSpan ? "Loading…" : "Not available.";
      this.attrsPart.replaceChildren(el("p", { class: "muted", text: note }));
      this.rawPart.replaceChildren();
      return;
    }
    const data = kept.data || {};
    const attrs = data.attributes && typeof data.attributes === "object" ? data.attributes : {};
    const focused = focusKey(this.attrsPart) || focusKey(this.rawPart);
    const kind = n.spanKind || spanKind(data);
    const view = Object.hasOwn(VIEWS, kind) ? VIEWS[kind] : undefined;
    /** @type {Array<Node|null>} */
    let parts = [];
    let failed = false;
    if (view) {
      const draw = { attrs, expanded: this.expanded, node: n, ended: n.end !== null && n.end !== undefined };
      try {
        parts = view(data, draw);
      } catch (error) {
        failed = true; // a shape no view expects: the raw attributes still say everything
        parts = [notice("error", [`This span could not be drawn as a ${n.spanKind} step (${String(error)}): its raw attributes are below.`])];
      }
    }
    const guardrail = guardrailSection({ attrs, expanded: this.expanded });
    this.attrsPart.replaceChildren(
      .../** @type {Node[]} */ ([guardrail, ...parts].filter(Boolean)),
      ...eventsList(data.events, this.expanded),
      ...sourceSections(data, this.expanded),
    );
    this.rawPart.replaceChildren(this.rawSection(attrs, failed || !view));
    if (focused) {
      const again = this.root.querySelector(`[data-focus="${CSS.escape(focused)}"]`);
      if (again instanceof HTMLElement) again.focus();
    }
  }

  /** @private The raw attributes: a table in a section, open as the reader last left it
   * (or, until they choose, open only for spans without a view of their own).
   * @param {Record<string, any>} attrs @param {boolean} openByDefault */
  rawSection(attrs, openByDefault) {
    const table = attributesTable(attrs, this.expanded);
    const summary = el("summary", {
      text: `Raw attributes (${formatCount(Object.keys(attrs).length)})`,
      attrs: { "data-focus": "raw" },
    });
    const section = el("details", {
      class: "raw-attrs",
      attrs: { open: this.rawOpen ?? openByDefault },
      children: [summary, table],
    });
    // A click on the summary (a key press on it clicks too) is the reader's choice, kept
    // for the next span; opening it from script (the default) is not.
    summary.addEventListener("click", () => {
      this.rawOpen = !section.open;
    });
    return section;
  }

  /** @private Fetch the full span unless the cache has this version. @param {SpanNode} node */
  load(node) {
    const kept = this.cache.get(node.key);
    if (!this.fetchSpan || this.loading.has(node.key)) return;
    // A live version is enough, but for an ended model call (the server adds its usage) and
    // a span from outside (the server adds who sent it and where its links lead).
    const outside = kept && kept.data && kept.data.source_id !== null && kept.data.source_id !== undefined;
    const enough = kept && kept.seq >= node.seq && (kept.fetched || ((node.spanKind !== "model" || node.end === null) && !outside));
    if (enough) return;
    const job = Promise.resolve()
      .then(() => /** @type {(traceId: string, spanId: string) => Promise<any>} */ (this.fetchSpan)(node.trace, node.id))
      .then(
        (data) => {
          this.loading.delete(node.key);
          if (data && typeof data === "object") {
            this.remember(data, Number.isFinite(data.seq) ? data.seq : node.seq, true);
          } else if (this.node === node && !this.cache.has(node.key)) {
            this.attrsPart.replaceChildren(el("p", { class: "muted", text: "Not available: this span is gone." }));
            this.rawPart.replaceChildren();
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

/** The `data-focus` name of the focused control inside `part`, if any. @param {Element} part */
function focusKey(part) {
  const active = document.activeElement;
  if (!(active instanceof HTMLElement) || !part.contains(active)) return "";
  return active.dataset.focus || "";
}
