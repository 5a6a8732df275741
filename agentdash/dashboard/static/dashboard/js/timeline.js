/**
 * The live timeline: a tree of spans keyed by span_id, nested by parent_span_id.
 *
 * A span appears the moment it starts (`end_time` null: "running", with a live duration) and
 * is redrawn when it ends (duration, ok/error). Each row has a waterfall bar placed within
 * its trace (CSS custom properties set through the CSSOM: `style-src 'self'` allows that, not
 * style attributes). Clicking a row shows its attributes as a key/value table. All span data
 * is untrusted and goes through `textContent`.
 *
 * @module dashboard/timeline
 */

import { el } from "../../core/js/dom.js";
import { formatDuration, formatJson, formatNsTimestamp, nowNs } from "./format.js";

const A = {
  kind: "agentdash.span.kind",
  hook: "agentdash.callback.hook",
  callback: "agentdash.callback.name",
  outcome: "agentdash.callback.outcome",
  agent: "gen_ai.agent.name",
  tool: "gen_ai.tool.name",
  model: "gen_ai.request.model",
  tokensIn: "gen_ai.usage.input_tokens",
  tokensOut: "gen_ai.usage.output_tokens",
  offline: "agentdash.model.offline",
};
const KINDS = new Set(["invocation", "agent", "model", "tool", "callback"]);
const OUTCOMES = new Set(["passed", "overridden", "raised", "disabled"]);
const TICK_MS = 100;

/**
 * @typedef {object} SpanData  a `span` change's data (docs/PROTOCOL.md)
 * @property {string} trace_id
 * @property {string} span_id
 * @property {string} [parent_span_id]
 * @property {string} name
 * @property {string} kind
 * @property {number} start_time Unix ns
 * @property {number|null} end_time Unix ns; null while running
 * @property {"unset"|"ok"|"error"} status
 * @property {string} [status_message]
 * @property {Record<string, any>} attributes
 * @property {{name: string, timestamp?: number, attributes?: object}[]} [events]
 */

/**
 * @typedef {object} SpanNode
 * @property {SpanData} data
 * @property {HTMLElement} node the tree item
 * @property {HTMLElement} row
 * @property {HTMLElement} children
 * @property {HTMLElement} duration
 * @property {boolean} [unfinished] its run ended before it did
 */

/** What kind of step a span is: ours, else guessed from the GenAI operation in its name. */
export function spanKind(span) {
  const kind = span.attributes && span.attributes[A.kind];
  if (KINDS.has(kind)) return kind;
  const name = String(span.name || "");
  if (name.startsWith("invoke_agent")) return "agent";
  if (name.startsWith("generate_content")) return "model";
  if (name.startsWith("execute_tool")) return "tool";
  if (name.startsWith("callback")) return "callback";
  return "other";
}

/** A row's state: the span's, or "unfinished" for a span whose run ended without it. */
function entryState(entry) {
  const state = spanState(entry.data);
  return state === "running" && entry.unfinished ? "unfinished" : state;
}

/** "running" until the span ends, then "error" or "ok". */
export function spanState(span) {
  if (span.end_time === null || span.end_time === undefined) return "running";
  return span.status === "error" ? "error" : "ok";
}

export class Timeline {
  /**
   * @param {object} parts
   * @param {HTMLElement} parts.tree where root spans go
   * @param {HTMLElement} parts.detail the attributes pane
   * @param {HTMLElement} parts.count the "N spans" label
   * @param {HTMLElement} parts.empty shown while there are no spans
   */
  constructor({ tree, detail, count, empty }) {
    this.tree = tree;
    this.detail = detail;
    this.count = count;
    this.empty = empty;
    /** @type {Map<string, SpanNode>} by span id */
    this.spans = new Map();
    /** @type {Map<string, Set<SpanNode>>} by trace id */
    this.traces = new Map();
    /** @type {Map<string, SpanNode[]>} spans whose parent has not arrived, by parent id */
    this.orphans = new Map();
    /** @type {Set<SpanNode>} */
    this.running = new Set();
    /** @type {string|null} */
    this.selected = null;
    this.timer = 0;
  }

  /**
   * Add or update spans (a later version of a span replaces the earlier one); the bars of
   * their traces are placed once per batch.
   *
   * @param {SpanData[]} spans
   */
  applySpans(spans) {
    const traces = new Set();
    for (const data of spans) {
      if (!data || typeof data.span_id !== "string") continue;
      let entry = this.spans.get(data.span_id);
      if (!entry) {
        entry = this.create(data);
        this.spans.set(data.span_id, entry);
        if (!this.traces.has(data.trace_id)) this.traces.set(data.trace_id, new Set());
        this.traces.get(data.trace_id).add(entry);
        this.place(entry);
        this.adoptOrphans(entry);
      } else {
        entry.data = data;
      }
      if (spanState(data) === "running" && !entry.unfinished) this.running.add(entry);
      else this.running.delete(entry);
      this.draw(entry);
      traces.add(data.trace_id);
      if (this.selected === data.span_id) this.showDetail(entry);
    }
    if (!traces.size) return;
    for (const traceId of traces) this.drawTrace(traceId);
    this.empty.hidden = true;
    this.updateCount();
    this.ensureTicking();
  }

  /**
   * A run's status. Once the run has finished, its spans that never reported an end (a worker
   * died, say) stop their clocks and show as "unfinished"; an end arriving later still wins.
   *
   * @param {{id: number, status: string}} run
   */
  applyRun(run) {
    if (run.status === "queued" || run.status === "running") return;
    const stopped = [...this.running].filter((entry) => entry.data.run_id === run.id);
    for (const entry of stopped) {
      entry.unfinished = true;
      this.running.delete(entry);
      this.draw(entry);
    }
    if (stopped.length) this.updateCount();
  }

  /** @private @returns {SpanNode} */
  create(data) {
    const twisty = el("button", {
      class: "twisty",
      text: "▾",
      attrs: { type: "button", "aria-label": "Collapse", tabindex: "-1" },
    });
    const duration = el("span", { class: "span-duration" });
    const row = el("div", {
      class: "span-row",
      attrs: { tabindex: "0" },
      children: [
        twisty,
        el("span", { class: "kind-badge" }),
        el("span", { class: "span-name" }),
        el("span", { class: "span-meta" }),
        el("span", { class: "span-bar", children: [el("span", { class: "bar-fill" })] }),
        duration,
      ],
    });
    const children = el("div", { class: "span-children", attrs: { role: "group" } });
    const node = el("div", {
      class: "span",
      attrs: { role: "treeitem", "aria-expanded": "true", "data-span-id": data.span_id },
      children: [row, children],
    });
    const entry = { data, node, row, children, duration };
    twisty.addEventListener("click", (event) => {
      event.stopPropagation();
      this.toggle(entry);
    });
    row.addEventListener("click", () => this.select(entry));
    row.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        this.select(entry);
      } else if (event.key === "ArrowLeft" || event.key === "ArrowRight") {
        const open = entry.node.getAttribute("aria-expanded") === "true";
        if (open === (event.key === "ArrowLeft")) this.toggle(entry);
      }
    });
    return entry;
  }

  /** @private Put a new span under its parent (or at the root until its parent arrives). */
  place(entry) {
    const parentId = entry.data.parent_span_id;
    const parent = parentId ? this.spans.get(parentId) : undefined;
    const container = parent ? parent.children : this.tree;
    entry.node.classList.toggle("orphan", Boolean(parentId) && !parent);
    if (parentId && !parent) {
      if (!this.orphans.has(parentId)) this.orphans.set(parentId, []);
      this.orphans.get(parentId).push(entry);
    }
    insertByStart(container, entry.node, entry.data.start_time, this.spans);
    if (parent) parent.node.classList.add("has-children");
  }

  /** @private Spans that arrived before this one, their parent, move under it. */
  adoptOrphans(parent) {
    const waiting = this.orphans.get(parent.data.span_id);
    if (!waiting) return;
    this.orphans.delete(parent.data.span_id);
    for (const child of waiting) this.place(child);
  }

  /** @private Redraw one row from its data. */
  draw(entry) {
    const span = entry.data;
    const attrs = span.attributes || {};
    const kind = spanKind(span);
    const state = entryState(entry);
    entry.node.dataset.kind = kind;
    entry.node.dataset.state = state;
    entry.node.dataset.name = String(span.name || "");
    const [, badge, name, meta] = entry.row.children;
    badge.textContent = kind === "invocation" ? "run" : kind;
    badge.className = `kind-badge kind-${kind}`;
    name.textContent = displayName(span, kind);
    name.title = String(span.name || "");
    meta.replaceChildren(...metaFor(kind, attrs, span));
    const end = state === "running" ? nowNs() : span.end_time;
    const duration = state === "unfinished" ? "—" : formatDuration(end - span.start_time);
    entry.duration.textContent = duration;
    entry.row.title = state === "error" && span.status_message ? String(span.status_message) : "";
  }

  /** @private Place every bar of a trace within the trace's extent. */
  drawTrace(traceId) {
    const members = [...(this.traces.get(traceId) || [])];
    if (!members.length) return;
    const now = nowNs();
    const start = Math.min(...members.map((s) => s.data.start_time));
    const end = Math.max(...members.map((s) => s.data.end_time ?? now));
    const total = Math.max(end - start, 1);
    for (const member of members) {
      const s = member.data;
      const left = ((s.start_time - start) / total) * 100;
      const width = (((s.end_time ?? now) - s.start_time) / total) * 100;
      member.row.style.setProperty("--bar-left", `${left.toFixed(2)}%`);
      member.row.style.setProperty("--bar-width", `${Math.max(width, 0.5).toFixed(2)}%`);
    }
  }

  /** @private */
  toggle(entry) {
    const open = entry.node.getAttribute("aria-expanded") !== "false";
    entry.node.setAttribute("aria-expanded", open ? "false" : "true");
    entry.row.firstElementChild.setAttribute("aria-label", open ? "Expand" : "Collapse");
  }

  /** @private */
  select(entry) {
    const before = this.selected ? this.spans.get(this.selected) : undefined;
    if (before) before.row.classList.remove("selected");
    if (before === entry) {
      this.selected = null;
      this.detail.hidden = true;
      return;
    }
    this.selected = entry.data.span_id;
    entry.row.classList.add("selected");
    this.showDetail(entry);
  }

  /** @private The attributes pane of a span: a key/value table, all textContent. */
  showDetail(entry) {
    const span = entry.data;
    const state = spanState(span);
    const end = span.end_time ?? nowNs();
    const rows = [
      ["name", span.name],
      ["status", state + (span.status_message ? `: ${span.status_message}` : "")],
      ["duration", `${formatDuration(end - span.start_time)}${state === "running" ? " …" : ""}`],
      ["start", formatNsTimestamp(span.start_time)],
      ["span_id", span.span_id],
      ["parent_span_id", span.parent_span_id || "—"],
      ["trace_id", span.trace_id],
      ["kind", span.kind],
    ];
    const attributes = Object.entries(span.attributes || {}).sort(([a], [b]) => a.localeCompare(b));
    const close = el("button", { class: "link", text: "Close", attrs: { type: "button" } });
    close.addEventListener("click", () => this.select(entry));
    this.detail.replaceChildren(
      el("header", {
        class: "detail-head",
        children: [el("h3", { text: String(span.name || span.span_id) }), close],
      }),
      kvTable(rows, "span"),
      el("h4", { text: "Attributes" }),
      attributes.length
        ? kvTable(attributes, "attributes")
        : el("p", { class: "muted", text: "None." }),
      ...eventsList(span.events),
    );
    this.detail.hidden = false;
  }

  /** @private */
  updateCount() {
    const running = this.running.size;
    const total = this.spans.size;
    const label = `${total} span${total === 1 ? "" : "s"}`;
    this.count.textContent = running ? `${label} · ${running} running` : label;
  }

  /** @private Live durations and bars while anything runs; stops when nothing does. */
  ensureTicking() {
    if (this.timer) return;
    this.timer = setInterval(() => {
      const running = [...this.running];
      if (!running.length) {
        clearInterval(this.timer);
        this.timer = 0;
        return;
      }
      for (const entry of running) this.draw(entry);
      for (const traceId of new Set(running.map((s) => s.data.trace_id))) this.drawTrace(traceId);
      const selected = this.selected ? this.spans.get(this.selected) : undefined;
      if (selected && spanState(selected.data) === "running") this.showDetail(selected);
    }, TICK_MS);
  }
}

/** The row's label: the interesting part of the span's name. */
function displayName(span, kind) {
  const attrs = span.attributes || {};
  if (kind === "callback" && attrs[A.callback]) return String(attrs[A.callback]);
  if (kind === "tool" && attrs[A.tool]) return String(attrs[A.tool]);
  if (kind === "agent" && attrs[A.agent]) return String(attrs[A.agent]);
  if (kind === "model" && attrs[A.model]) return String(attrs[A.model]);
  return String(span.name || span.span_id);
}

/** Badges after the name: a callback's outcome and hook, a model call's tokens. (The kind
 * badge already says invoke_agent / generate_content / execute_tool.) */
function metaFor(kind, attrs, span) {
  const out = [];
  if (kind === "callback") {
    const outcome = String(attrs[A.outcome] || (spanState(span) === "running" ? "" : "passed"));
    if (outcome) {
      const known = OUTCOMES.has(outcome) ? outcome : "other";
      out.push(el("span", { class: `outcome outcome-${known}`, text: outcome }));
    }
    if (attrs[A.hook]) out.push(el("span", { class: "tag", text: String(attrs[A.hook]) }));
  } else if (kind === "model") {
    const tin = attrs[A.tokensIn];
    const tout = attrs[A.tokensOut];
    if (tin !== undefined || tout !== undefined) {
      out.push(el("span", { class: "tokens", text: `${tin ?? "?"} → ${tout ?? "?"} tok` }));
    }
    if (attrs[A.offline] && attrs[A.model] !== "offline") {
      out.push(el("span", { class: "tag tag-offline", text: "offline" }));
    }
  }
  if (span.status === "error") {
    out.push(el("span", { class: "outcome outcome-raised", text: "error" }));
  }
  return out;
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
            el("strong", { text: String(event.name || "event") }),
            el("pre", { class: "kv-value", text: formatJson(event.attributes || {}) }),
          ],
        }),
      ),
    }),
  ];
}

/** Insert `node` among `container`'s spans in start-time order (stable for equal starts). */
function insertByStart(container, node, start, spans) {
  for (const sibling of container.children) {
    const other = spans.get(sibling.dataset.spanId || "");
    if (other && other.node !== node && other.data.start_time > start) {
      container.insertBefore(node, sibling);
      return;
    }
  }
  container.append(node);
}
