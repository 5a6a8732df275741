/**
 * A callback span in the details pane: its hook, its outcome (passed, overridden, raised,
 * disabled) said in words, the step it belongs to, and — for one that overrode — what it
 * returned (`agentdash.callback.returned`) and what that replaced or skipped
 * (`agentdash.callback.replaced`, or the step itself for a `before_*` hook).
 *
 * @module dashboard/span_detail_callback
 */

import { el } from "../../../core/js/dom.js";
import { facts, jsonAttribute, jsonBlock, notice, section, turns } from "./span_detail_parts.js";
import { valueBlock } from "./span_detail_value.js";

const A = {
  name: "agentdash.callback.name",
  hook: "agentdash.callback.hook",
  outcome: "agentdash.callback.outcome",
  style: "agentdash.callback.style",
  agent: "gen_ai.agent.name",
  returned: "agentdash.callback.returned",
  replaced: "agentdash.callback.replaced",
  error: "agentdash.error.message",
};

/** What an override by each hook does to its step (ADK's callback contract). */
const OVERRIDES = {
  before_agent: "The agent did not run: what the callback returned became its answer.",
  after_agent: "What the callback returned was added as the agent's last event.",
  before_model: "The model was not called: what the callback returned was used as its response.",
  after_model: "The model's response was replaced by what the callback returned.",
  on_model_error: "The model's error was replaced by the response the callback returned.",
  before_tool: "The tool was not run: what the callback returned was used as its result.",
  after_tool: "The tool's result was replaced by what the callback returned.",
  on_tool_error: "The tool's error was replaced by the result the callback returned.",
};

const OUTCOMES = {
  passed: "Passed: it returned nothing, and the step went on unchanged.",
  raised: "Raised an exception: the run stopped here.",
  disabled: "Switched off for this run (by an operator): it was not called.",
};

/**
 * @param {Record<string, any>} data the span's full data
 * @param {import("./span_detail_parts.js").Draw & {node: any}} draw
 * @returns {Array<Node|null>}
 */
export function callbackView(data, draw) {
  const a = draw.attrs;
  const hook = String(a[A.hook] ?? draw.node.hook ?? "");
  const outcome = String(a[A.outcome] ?? draw.node.outcome ?? "");
  const parent = draw.node.parent;
  const out = [
    facts(
      [
        ["callback", a[A.name]],
        ["hook", hook],
        ["style", a[A.style]],
        ["outcome", outcome || (draw.ended ? "unknown" : "running")],
        ["agent", a[A.agent]],
        ["step", parent ? parent.name : null],
      ],
      "callback",
    ),
  ];
  if (outcome === "overridden") {
    out.push(notice("warn", [own(OVERRIDES, hook) || "Overridden: what the callback returned was used instead of the step's own result."]));
  } else if (outcome === "raised") {
    out.push(notice("error", [OUTCOMES.raised]));
    if (a[A.error]) out.push(valueBlock(String(a[A.error]), { key: "error", expanded: draw.expanded, label: "Error", copy: true, mono: true }));
  } else if (own(OUTCOMES, outcome)) {
    out.push(notice("info", [/** @type {string} */ (own(OUTCOMES, outcome))]));
  }
  if (outcome === "overridden") {
    out.push(section("Returned", [payload(a[A.returned], "returned", draw)]));
    if (a[A.replaced] !== undefined) out.push(section("Replaced", [payload(a[A.replaced], "replaced", draw)]));
  }
  return out;
}

/**
 * A returned or replaced value: a message list as turns, anything else as JSON.
 *
 * @param {unknown} raw the attribute
 * @param {string} key
 * @param {import("./span_detail_parts.js").Draw} draw
 */
function payload(raw, key, draw) {
  const found = jsonAttribute(raw);
  if (found.state === "absent") {
    return el("p", { class: "muted", text: "Not recorded (content capture may be off for this run)." });
  }
  if (found.state === "ok" && isMessages(found.value)) return turns(found.value, draw, key);
  return jsonBlock(found, { key, draw, label: "Value" });
}

/** @param {unknown} value @returns {boolean} whether it is a list of messages (role, parts) */
function isMessages(value) {
  return Array.isArray(value) && value.length > 0 && value.every((m) => m && typeof m === "object" && Array.isArray(m.parts) && "role" in m);
}

/**
 * A table's own entry for a key from a span (never one the object inherits, like
 * "constructor"); undefined when it has none.
 *
 * @param {Record<string, string>} table
 * @param {unknown} key
 * @returns {string|undefined}
 */
function own(table, key) {
  return typeof key === "string" && Object.hasOwn(table, key) ? table[key] : undefined;
}
