/**
 * A tool span in the details pane: which tool, whom it acted as, its arguments and its result
 * as indented JSON, each with a Copy button, and what callbacks did to the call
 * (`agentdash.skipped_by`, `agentdash.replaced_by`).
 *
 * @module dashboard/span_detail_tool
 */

import { el } from "../../../core/js/dom.js";
import { facts, jsonAttribute, jsonBlock, notice } from "./span_detail_parts.js";
import { valueBlock } from "./span_detail_value.js";

const A = {
  name: "gen_ai.tool.name",
  type: "gen_ai.tool.type",
  callId: "gen_ai.tool.call.id",
  description: "gen_ai.tool.description",
  args: "gen_ai.tool.call.arguments",
  result: "gen_ai.tool.call.result",
  skippedBy: "agentdash.skipped_by",
  replacedBy: "agentdash.replaced_by",
  longRunning: "agentdash.tool.long_running",
  transfer: "agentdash.transfer_to_agent",
  escalate: "agentdash.escalate",
  error: "agentdash.error.message",
  identity: "agentdash.tool.identity",
  principal: "agentdash.tool.principal",
};

/** Whom the tool acted as: "user 42", "agent agentdash-agent" (docs/SAFETY.md, Identity). */
function actedAs(/** @type {Record<string, any>} */ a) {
  if (!a[A.identity]) return null;
  return a[A.principal] ? `${a[A.identity]} ${a[A.principal]}` : String(a[A.identity]);
}

/**
 * @param {Record<string, any>} data the span's full data
 * @param {import("./span_detail_parts.js").Draw} draw
 * @returns {Array<Node|null>}
 */
export function toolView(data, draw) {
  const a = draw.attrs;
  const out = [
    facts(
      [
        ["tool", a[A.name]],
        ["type", a[A.type]],
        ["call id", a[A.callId]],
        ["acts as", actedAs(a)],
        ["long-running", a[A.longRunning] ? "yes" : null],
        ["transfers to", a[A.transfer]],
        ["escalates", a[A.escalate] ? "yes" : null],
      ],
      "tool",
    ),
  ];
  if (a[A.description]) {
    out.push(valueBlock(String(a[A.description]), { key: "desc", expanded: draw.expanded, label: "Description", mono: false }));
  }
  if (a[A.skippedBy]) {
    out.push(notice("warn", ["Not run: the before_tool callback ", el("code", { text: String(a[A.skippedBy]) }), " answered instead."]));
  }
  if (a[A.error]) out.push(notice("error", [String(a[A.error])]));
  out.push(payload(a[A.args], "args", "arguments", draw));
  if (a[A.replacedBy]) {
    out.push(notice("info", ["Replaced by the callback ", el("code", { text: String(a[A.replacedBy]) }), ": this is what the model got."]));
  }
  out.push(payload(a[A.result], "result", "result", draw));
  return out;
}

/**
 * One JSON payload with a Copy button, or why it is missing.
 *
 * @param {unknown} raw the attribute
 * @param {string} key
 * @param {string} noun "arguments" or "result"
 * @param {import("./span_detail_parts.js").Draw} draw
 */
function payload(raw, key, noun, draw) {
  const found = jsonAttribute(raw);
  if (found.state === "absent") {
    const why = noun === "result" && !draw.ended ? "Running…" : `No ${noun} recorded (content capture may be off for this run).`;
    return el("p", { class: "muted", text: why });
  }
  return jsonBlock(found, { key, draw, label: noun[0].toUpperCase() + noun.slice(1) });
}
