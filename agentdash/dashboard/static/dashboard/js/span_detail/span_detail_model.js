/**
 * A model span in the details pane: the request as the conversation the model saw (system
 * instruction, the turns, the tools declared), then the response, its finish reason and the
 * tokens — read from the GenAI attributes the runtime records (`gen_ai.system_instructions`,
 * `gen_ai.input.messages`, `gen_ai.tool.definitions`, `gen_ai.output.messages`,
 * `gen_ai.response.finish_reasons`, `gen_ai.usage.*`) and, when the server sends one, the
 * span's `usage` (tokens with cost), and the provider's safety settings the call was made with
 * (`agentdash.model.safety_settings`, category → threshold). Model text is shown as text,
 * never as markup.
 *
 * @module dashboard/span_detail_model
 */

import { el } from "../../../core/js/dom.js";
import { formatCount } from "../common/format.js";
import { costText } from "../common/usage.js";
import { counted, facts, heading, jsonAttribute, jsonBlock, newCalls, notice, section, turns, unparsedNote } from "./span_detail_parts.js";
import { plainTable } from "./span_detail_tables.js";
import { valueBlock } from "./span_detail_value.js";

const A = {
  system: "gen_ai.system_instructions",
  input: "gen_ai.input.messages",
  output: "gen_ai.output.messages",
  tools: "gen_ai.tool.definitions",
  finish: "gen_ai.response.finish_reasons",
  requestModel: "gen_ai.request.model",
  responseModel: "gen_ai.response.model",
  provider: "gen_ai.provider.name",
  offline: "agentdash.model.offline",
  skippedBy: "agentdash.skipped_by",
  replacedBy: "agentdash.replaced_by",
  error: "agentdash.error.message",
  safety: "agentdash.model.safety_settings",
  instruction: "agentdash.instruction.version",
};
const USAGE_PREFIX = "gen_ai.usage.";

/** @typedef {import("./span_detail_parts.js").Draw} Draw */
/** @typedef {import("./span_detail_parts.js").Calls} Calls */
/** @typedef {ReturnType<typeof jsonAttribute>} Found  a JSON attribute read */

/**
 * @param {Record<string, any>} data the span's full data (`usage` optional)
 * @param {import("./span_detail_parts.js").Draw} draw
 * @returns {Array<Node|null>}
 */
export function modelView(data, draw) {
  const a = draw.attrs;
  const out = [usageFacts(data.usage, a)];
  if (a[A.skippedBy]) {
    out.push(notice("warn", ["Not called: the before_model callback ", el("code", { text: String(a[A.skippedBy]) }), " answered instead."]));
  }
  if (a[A.error]) out.push(notice("error", [String(a[A.error])]));
  const calls = newCalls();
  out.push(section("Request", requestView(a, draw, calls), "convo"), section("Response", responseView(a, draw, calls), "convo"));
  out.push(safetyView(jsonAttribute(a[A.safety]), draw));
  return out;
}

/** The safety settings sent with the request: a table of category → threshold (anything
 * else as it was recorded); null when none were. @param {Found} settings @param {Draw} draw */
function safetyView(settings, draw) {
  if (settings.state === "absent") return null;
  const list = settings.state === "ok" && Array.isArray(settings.value) ? settings.value : null;
  const rows = list && list.every((s) => s && typeof s === "object" && !Array.isArray(s))
    ? list.map((s) => /** @type {[string, unknown]} */ ([String(s.category ?? "(no category)"), String(s.threshold ?? "")]))
    : null;
  const body = rows
    ? plainTable(rows, "safety settings")
    : jsonBlock(settings, { key: "safety", draw, label: "Safety settings" });
  return section("Safety settings", [body], "detail-safety");
}

/**
 * What the model was sent: the system instruction, the turns, the tools declared.
 *
 * @param {Record<string, any>} a the span's attributes
 * @param {Draw} draw
 * @param {Calls} calls
 */
function requestView(a, draw, calls) {
  const out = [];
  const system = jsonAttribute(a[A.system]);
  if (system.state !== "absent") out.push(systemView(system, draw));
  const input = jsonAttribute(a[A.input]);
  if (input.state === "ok") {
    const n = Array.isArray(input.value) ? input.value.length : 0;
    out.push(el("div", { class: "convo-label", text: counted(n, "message") }), turns(input.value, draw, "in", calls));
  } else if (input.state === "unparsed") {
    out.push(jsonBlock(input, { key: "in", draw, label: "Messages" }));
  } else {
    out.push(el("p", { class: "muted", text: "The messages were not recorded (content capture is off for this run)." }));
  }
  out.push(...toolsView(jsonAttribute(a[A.tools]), draw));
  return out;
}

/**
 * What came back (or replaced it), why it stopped.
 *
 * @param {Record<string, any>} a the span's attributes
 * @param {Draw} draw
 * @param {Calls} calls
 */
function responseView(a, draw, calls) {
  const out = [];
  if (a[A.replacedBy]) {
    out.push(notice("info", ["Replaced by the callback ", el("code", { text: String(a[A.replacedBy]) }), ": this is what the agent got."]));
  }
  const output = jsonAttribute(a[A.output]);
  if (output.state === "ok") out.push(turns(output.value, draw, "out", calls));
  else if (output.state === "unparsed") {
    out.push(jsonBlock(output, { key: "out", draw, label: "Messages" }));
  } else {
    out.push(el("p", { class: "muted", text: draw.ended ? "No response recorded." : "Waiting for the response…" }));
  }
  const finish = Array.isArray(a[A.finish]) ? a[A.finish].join(", ") : a[A.finish];
  out.push(facts([["finish reason", finish], ["response model", a[A.responseModel]]], "response"));
  return out;
}

/**
 * The system instruction: its text parts as text.
 *
 * @param {Exclude<Found, {state: "absent"}>} system
 * @param {Draw} draw
 */
function systemView(system, draw) {
  if (system.state === "unparsed") {
    return valueBlock(system.text, { key: "sys", expanded: draw.expanded, label: "System instruction", note: unparsedNote(system.text) });
  }
  /** @type {any[]} */
  const parts = Array.isArray(system.value) ? system.value : [system.value];
  const text = parts.every((p) => p && typeof p === "object" && p.type === "text")
    ? parts.map((p) => String(p.content ?? "")).join("\n")
    : null;
  return el("div", {
    class: "turn system",
    attrs: { "data-role": "system" },
    children: [
      el("div", { class: "turn-role", text: "system" }),
      el("div", { class: "turn-body", children: [valueBlock(text ?? system.value, { key: "sys", expanded: draw.expanded, mono: text === null })] }),
    ],
  });
}

/** The tools declared to the model, if recorded. @param {Found} tools @param {Draw} draw */
function toolsView(tools, draw) {
  if (tools.state === "absent") return [];
  if (tools.state === "unparsed") {
    return [heading("Tools declared"), valueBlock(tools.text, { key: "tools", expanded: draw.expanded, note: unparsedNote(tools.text), mono: true })];
  }
  /** @type {any[]} */
  const list = Array.isArray(tools.value) ? tools.value : [tools.value];
  return [
    heading("Tools declared", String(list.length)),
    el("ul", {
      class: "tool-defs",
      children: list.map((tool, i) => {
        const t = tool && typeof tool === "object" ? tool : {};
        const description = typeof t.description === "string" ? t.description : "";
        return el("li", {
          class: "tool-def",
          children: [
            el("div", { class: "part-head", children: [el("code", { text: String(t.name ?? "(no name)") }), t.type && t.type !== "function" ? el("span", { class: "muted", text: String(t.type) }) : null] }),
            description ? valueBlock(description, { key: `tool.${i}.d`, expanded: draw.expanded, mono: false }) : null,
            t.parameters !== undefined ? valueBlock(t.parameters, { key: `tool.${i}.p`, expanded: draw.expanded, label: "Parameters", mono: true }) : null,
          ],
        });
      }),
    }),
  ];
}

/**
 * The model and its tokens: the server's `usage` (with cost) when it sent one, else the
 * token attributes the span carries.
 *
 * @param {import("../common/usage.js").Usage|null|undefined} usage the span's, when the server sent one
 * @param {Record<string, any>} a the span's attributes
 */
function usageFacts(usage, a) {
  const model = a[A.requestModel];
  const offline = a[A.offline] && model !== "offline" ? `${model ?? ""} (offline)` : model;
  /** @type {[string, unknown][]} */
  const pairs = [["model", offline], ["provider", a[A.provider] !== model ? a[A.provider] : null]];
  // A stored instruction (docs/INSTRUCTIONS.md): which version this call was given.
  if (typeof a[A.instruction] === "string") pairs.push(["instruction", a[A.instruction]]);
  if (usage && typeof usage === "object") {
    pairs.push(
      ["input tokens", formatCount(usage.input)],
      ["output tokens", formatCount(usage.output)],
      ["cached tokens", formatCount(usage.cached)],
      ["thinking tokens", formatCount(usage.thinking)],
      ["cost", cost(usage)],
    );
  } else {
    for (const [key, value] of Object.entries(a)) {
      if (!key.startsWith(USAGE_PREFIX)) continue;
      const name = key.slice(USAGE_PREFIX.length).replace(/[._]/g, " ").replace(/ tokens$/, "");
      pairs.push([`${name} tokens`, typeof value === "number" ? formatCount(value) : String(value)]);
    }
  }
  return facts(pairs, "model and tokens");
}

/**
 * The span's cost as the page's totals write it (usage.js), and the prices' date.
 *
 * @param {import("../common/usage.js").Usage} usage
 * @returns {string|null}
 */
function cost(usage) {
  if (typeof usage.cost_usd !== "number" || !Number.isFinite(usage.cost_usd)) {
    return usage.model ? `no price for ${usage.model}` : null;
  }
  const amount = costText(usage);
  return usage.price_as_of ? `${amount} (prices of ${usage.price_as_of})` : amount;
}
