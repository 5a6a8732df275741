/**
 * Building blocks the span details views share: facts (a row of labelled values), notices,
 * the Guardrail section (any span a guardrail decided on), and the turns of a conversation in the OpenTelemetry GenAI message shape
 * (`[{role, parts: [{type: "text"|"reasoning"|"tool_call"|"tool_call_response"|…}]}]`),
 * which model spans record and overriding callbacks return. Every string is untrusted model or
 * tool output: it reaches the page as text only.
 *
 * @module dashboard/span_detail_parts
 */

import { el } from "../../../core/js/dom.js";
import { formatCount } from "../common/format.js";
import { PRETTY_CHARS, parseJson, valueBlock } from "./span_detail_value.js";

/** Parts drawn per conversation at most; the rest is counted (the raw attributes have all). */
const MAX_PARTS = 300;
/** The attributes a guardrail writes on the span of the step it decided on. */
const GUARDRAIL = {
  decision: "agentdash.guardrail.decision",
  name: "agentdash.guardrail.name",
  reason: "agentdash.guardrail.reason",
  policy: "agentdash.guardrail.policy",
  callback: "agentdash.callback.name",
};
/** Decisions the section marks (its `data-decision`, for colour); any other is shown as text. */
const MARKED_DECISIONS = new Set(["allowed", "blocked", "redacted", "unsafe", "limit"]);

/**
 * @typedef {object} Draw  what every view is drawn with
 * @property {Record<string, any>} attrs the span's attributes
 * @property {Set<string>} expanded value blocks the reader expanded (by key)
 * @property {boolean} [ended] whether the span has ended (the kinds' views are told)
 */

/**
 * A row of facts; pairs whose value is empty are left out.
 *
 * @param {Array<[string, unknown]>} pairs
 * @param {string} [label] the list's accessible name
 * @returns {HTMLElement|null}
 */
export function facts(pairs, label) {
  const items = pairs.filter(([, value]) => value !== undefined && value !== null && value !== "");
  if (!items.length) return null;
  return el("dl", {
    class: "facts",
    attrs: { "aria-label": label },
    children: items.map(([name, value]) =>
      el("div", {
        class: "fact",
        attrs: { "data-fact": name },
        children: [el("dt", { text: name }), el("dd", { text: String(value) })],
      }),
    ),
  });
}

/**
 * A sentence that matters (a skipped step, an error): prose, with an optional emphasis.
 *
 * @param {string} kind "info" | "warn" | "error"
 * @param {Array<string|Node>} children
 */
export function notice(kind, children) {
  return el("p", { class: `detail-notice notice-${kind}`, children });
}

/**
 * A part of a view with its heading, named for screen readers (and tests).
 *
 * @param {string} title
 * @param {Array<Node|string|null|undefined|false>} children
 * @param {string|null} [cls] its class names
 * @returns {HTMLElement}
 */
export function section(title, children, cls = null) {
  return el("section", { class: cls, attrs: { "aria-label": title }, children: [heading(title), ...children] });
}

/**
 * What a guardrail decided on this step — its decision, name, policy ("name@version") and
 * reason — for a span of any kind that carries `agentdash.guardrail.decision`; null for one
 * that does not.
 *
 * @param {Draw} draw
 * @returns {HTMLElement|null}
 */
export function guardrailSection(draw) {
  const a = draw.attrs;
  const decision = a[GUARDRAIL.decision];
  if (decision === undefined || decision === null || decision === "") return null;
  const reason = a[GUARDRAIL.reason];
  const out = section(
    "Guardrail",
    [
      facts(
        [
          ["decision", String(decision)],
          ["guardrail", a[GUARDRAIL.name] ?? a[GUARDRAIL.callback]],
          ["policy", a[GUARDRAIL.policy]],
        ],
        "guardrail",
      ),
      reason === undefined || reason === null || reason === ""
        ? null
        : valueBlock(String(reason), { key: "guardrail.reason", expanded: draw.expanded, label: "Reason", mono: false }),
    ],
    "detail-guardrail",
  );
  if (MARKED_DECISIONS.has(decision)) out.dataset.decision = decision;
  return out;
}

/**
 * A recorded JSON attribute (from {@link jsonAttribute}, not absent) as a value block with a
 * Copy button; text that is not JSON is shown as it came, saying so.
 *
 * @param {{state: "ok", value: any}|{state: "unparsed", text: string}} found
 * @param {{key: string, draw: {expanded: Set<string>}, label?: string}} options
 */
export function jsonBlock(found, { key, draw, label }) {
  const common = { key, expanded: draw.expanded, label, copy: true, mono: true };
  return found.state === "unparsed"
    ? valueBlock(found.text, { ...common, note: unparsedNote(found.text) })
    : valueBlock(found.value, common);
}

/** A section heading in the pane. @param {string} text @param {string} [extra] said after it, muted */
export function heading(text, extra) {
  return el("h4", { children: [text, extra ? el("span", { class: "muted h-extra", text: extra }) : null] });
}

/** A count with its noun: "1 message", "3 messages". @param {number} n @param {string} noun */
export function counted(n, noun) {
  return `${formatCount(n)} ${noun}${n === 1 ? "" : "s"}`;
}

/**
 * The value of a JSON-text attribute: parsed, or why not (absent, cut by the runtime's size
 * cap, not JSON).
 *
 * @param {unknown} raw
 * @returns {{state: "absent"}|{state: "ok", value: any}|{state: "unparsed", text: string}}
 */
export function jsonAttribute(raw) {
  if (raw === undefined || raw === null || raw === "") return { state: "absent" };
  if (typeof raw !== "string") return { state: "ok", value: raw };
  const parsed = parseJson(raw);
  return parsed.ok ? { state: "ok", value: parsed.value } : { state: "unparsed", text: raw };
}

/** What to say about a payload that could not be read as JSON. @param {string} text */
export function unparsedNote(text) {
  if (text.length > PRETTY_CHARS) return "too large to read here: shown as recorded";
  if (text.endsWith("…[truncated]")) return "cut at the runtime's size cap: shown as recorded";
  return "not JSON: shown as recorded";
}

/**
 * @typedef {object} Calls
 * @property {Map<string, string>} byId tool call id → tool name
 * @property {string[]} pending names of the latest model turn's calls not yet answered, in
 *   order: results without a known id answer them in that order (as ADK sends them; the
 *   runtime keeps ids it made up off the model's request)
 */

/** @returns {Calls} */
export function newCalls() {
  return { byId: new Map(), pending: [] };
}

/**
 * The role a person reads: the conventions' "assistant" is the model (ADK's name).
 *
 * @param {Record<string, any>} message
 * @returns {string}
 */
function roleOf(message) {
  /** @type {any[]} */
  const parts = Array.isArray(message.parts) ? message.parts : [];
  if (parts.length && parts.every((p) => p && p.type === "tool_call_response")) return "tool";
  const role = typeof message.role === "string" && message.role ? message.role : "unknown";
  return role === "assistant" ? "model" : role;
}

/**
 * The turns of a conversation, in order.
 *
 * @param {unknown} messages the parsed messages (anything else is shown as a value)
 * @param {Draw} draw
 * @param {string} key prefix of the blocks' keys
 * @param {Calls} [calls] the tool calls seen so far, shared between the request and the
 *   response: a result names only its call's id, or nothing at all
 * @returns {HTMLElement}
 */
export function turns(messages, draw, key, calls = newCalls()) {
  if (!Array.isArray(messages)) {
    return valueBlock(messages, { key, expanded: draw.expanded, label: "Messages" });
  }
  const list = el("ol", { class: "turns" });
  let budget = MAX_PARTS;
  let left = 0;
  messages.forEach((message, i) => {
    if (!message || typeof message !== "object") {
      list.append(el("li", { class: "turn", children: [valueBlock(message, { key: `${key}.${i}`, expanded: draw.expanded })] }));
      return;
    }
    /** @type {any[]} */
    const parts = Array.isArray(message.parts) ? message.parts : [];
    if (budget <= 0) {
      left += 1;
      return;
    }
    const role = roleOf(message);
    const shown = parts.slice(0, budget);
    budget -= shown.length;
    if (shown.some((p) => p && p.type === "tool_call")) calls.pending = [];
    const body = shown.map((part, j) => partView(part, draw, `${key}.${i}.${j}`, calls));
    if (shown.length < parts.length) {
      body.push(el("p", { class: "muted", text: `${counted(parts.length - shown.length, "more part")} not shown` }));
    }
    if (!parts.length) body.push(el("p", { class: "muted", text: "(no parts)" }));
    list.append(
      el("li", {
        class: "turn",
        attrs: { "data-role": role },
        children: [el("div", { class: "turn-role", text: role }), el("div", { class: "turn-body", children: body })],
      }),
    );
  });
  if (!left) return list;
  const more = el("p", { class: "muted", text: `${counted(left, "more message")} not shown (see the raw attributes)` });
  return el("div", { children: [list, more] });
}

/**
 * One part of a message.
 *
 * @param {any} part as recorded (anything)
 * @param {Draw} draw
 * @param {string} key
 * @param {Calls} calls
 * @returns {HTMLElement}
 */
function partView(part, draw, key, calls) {
  const expanded = draw.expanded;
  if (!part || typeof part !== "object") return valueBlock(part, { key, expanded });
  switch (part.type) {
    case "text":
      return valueBlock(String(part.content ?? ""), { key, expanded, mono: false });
    case "reasoning":
      return valueBlock(String(part.content ?? ""), { key, expanded, mono: false, label: "Thinking" });
    case "tool_call": {
      const name = typeof part.name === "string" ? part.name : "";
      if (typeof part.id === "string" && part.id) calls.byId.set(part.id, name);
      calls.pending.push(name);
      return el("div", {
        class: "part-call",
        children: [
          el("div", { class: "part-head", children: [el("span", { class: "part-tag", text: "call" }), el("code", { text: name || "(no name)" }), idText(part.id)] }),
          valueBlock(part.arguments ?? {}, { key, expanded, label: "Arguments", copy: true, mono: true }),
        ],
      });
    }
    case "tool_call_response": {
      const named = typeof part.name === "string" && part.name ? part.name : undefined;
      const known = typeof part.id === "string" ? calls.byId.get(part.id) : undefined;
      const at = known === undefined ? -1 : calls.pending.indexOf(known);
      if (at >= 0) calls.pending.splice(at, 1);
      const name = named ?? known ?? calls.pending.shift();
      return el("div", {
        class: "part-call part-result",
        children: [
          el("div", { class: "part-head", children: [el("span", { class: "part-tag", text: "result" }), name ? el("code", { text: name }) : null, idText(part.id)] }),
          valueBlock(part.response ?? null, { key, expanded, name: "result", copy: true, mono: true }),
        ],
      });
    }
    case "blob":
    case "file":
    case "uri": {
      const what = [part.type, part.mime_type, Number.isFinite(part.size) ? `${formatCount(part.size)} bytes` : ""];
      return el("p", { class: "muted part-blob", text: `[${what.filter(Boolean).join(", ")}]` });
    }
    default:
      return valueBlock(part, { key, expanded, label: String(part.type || "part"), mono: true });
  }
}

/** @param {unknown} id @returns {HTMLElement|null} */
function idText(id) {
  return typeof id === "string" && id ? el("span", { class: "muted part-id", text: id }) : null;
}
