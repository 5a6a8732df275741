/**
 * The chat's items, built: bubbles and their parts (text, tool calls and results, errors),
 * operators' notes, run notes, the "working" line; and the few questions asked of built items.
 *
 * A stored event's `html` (rendered and sanitized by the server) is inserted ONLY through
 * `setSanitizedHtml`; every other string — streamed text, the text being sent, tool names,
 * arguments and results, error messages, authors — goes through `textContent` (`el`).
 *
 * Item shapes (what the rest of the chat relies on): a bubble is an `li.msg` with
 * `data-author` and, once stored, `data-invocation-id`, holding a `.msg-meta` and one
 * `div.msg-part[data-event-id]` per event; an operator's note is an `li.msg-note` that is its
 * own event node; an event node carries `data-seq` when its place in the session is known.
 *
 * @module dashboard/chat_render
 */

import { el, setSanitizedHtml } from "../../../core/js/dom.js";
import { formatClock, formatJson } from "../common/format.js";

/**
 * @typedef {object} StoredEvent  an `event` change's data (docs/PROTOCOL.md)
 * @property {string} id
 * @property {string} invocation_id
 * @property {string} author
 * @property {number} timestamp Unix seconds
 * @property {number} [position] its place in the session (1, 2, 3, …): the cursor of older pages
 * @property {string} [html]
 * @property {{id: string, name: string, args: Record<string, any>}[]} [function_calls]
 * @property {{id: string, name: string, response: object}[]} [function_responses]
 * @property {object} [state_delta]
 * @property {string} [reason] an operator's edit's reason, else ""
 * @property {string|null} [error_code]
 * @property {string|null} [error_message]
 * @property {boolean} [final]
 */

/** @typedef {{events: StoredEvent[], before: number|null}} EventPage */

/** The author of the user's messages. */
export const USER = "user";
/** The author of an operator's event (a state edit): a note, not a bubble. */
export const OPERATOR = "operator";
const CANCELLED = "CANCELLED"; // the error code of the event that tells a run was stopped

/**
 * One event's node: an operator's note (an item), or the part of a bubble.
 *
 * @param {StoredEvent} event
 * @param {boolean} live errors are announced (`role="alert"`); false for history
 * @returns {HTMLElement|null} null when the event has nothing to show
 */
export function renderEvent(event, live) {
  const node = event.author === OPERATOR ? operatorNote(event) : renderPart(event, live);
  if (node === null) return null;
  const known = event.position;
  if (typeof known === "number" && Number.isFinite(known)) node.dataset.seq = String(known);
  return node;
}

/**
 * Whether an event carries text (it then replaces its streamed version).
 *
 * @param {StoredEvent} event
 * @returns {boolean}
 */
export function hasText(event) {
  return typeof event.html === "string" && event.html.trim() !== "";
}

/**
 * The runtime's calls to the person (ADK's names), labelled by what they ask. A Map: a tool
 * may be named anything, "toString" or "constructor" too, and is never one of these.
 *
 * @type {Map<unknown, {call: string, result: string}>}
 */
const FRAMEWORK_CALLS = new Map([
  ["adk_request_confirmation", { call: "approval asked", result: "approval answer" }],
  ["adk_request_credential", { call: "credential asked", result: "credential" }],
]);

/**
 * The content of one event, or null when it has nothing to show.
 *
 * @param {StoredEvent} event
 * @param {boolean} live
 * @returns {HTMLElement|null}
 */
function renderPart(event, live) {
  const calls = Array.isArray(event.function_calls) ? event.function_calls : [];
  const responses = Array.isArray(event.function_responses) ? event.function_responses : [];
  const text = hasText(event);
  const hasError = Boolean(event.error_code || event.error_message);
  if (!text && !calls.length && !responses.length && !hasError) return null;
  const part = el("div", { class: "msg-part", attrs: { "data-event-id": event.id } });
  if (text) {
    const body = el("div", { class: "msg-body md" });
    setSanitizedHtml(body, event.html); // server-sanitized: the one HTML sink
    part.append(body);
  }
  for (const call of calls) {
    const asked = FRAMEWORK_CALLS.get(call.name);
    if (asked) {
      // The runtime asking the person (ADK's own call): what it asks about, not a tool.
      const args = call.args || {};
      const about = (args.originalFunctionCall || {}).name || (args.function_call_id ?? "");
      part.append(toolBlock("tool-call", asked.call, about, args.toolConfirmation ?? args));
    } else {
      part.append(toolBlock("tool-call", "call", call.name, call.args));
    }
  }
  for (const response of responses) {
    const asked = FRAMEWORK_CALLS.get(response.name);
    const label = asked ? asked.result : "result";
    part.append(toolBlock("tool-result", label, asked ? "" : response.name, response.response));
  }
  if (hasError) {
    const cancelled = event.error_code === CANCELLED;
    if (!cancelled) part.classList.add("has-error");
    part.append(
      el("div", {
        class: cancelled ? "msg-cancel-box" : "msg-error-box",
        attrs: { role: live && !cancelled ? "alert" : null },
        children: cancelled
          ? outcomeText(true, "cancelled", event.error_message)
          : outcomeText(false, event.error_code || "error", event.error_message),
      }),
    );
  }
  return part;
}

/** An operator's event: what was edited, why, when. @param {StoredEvent} event */
function operatorNote(event) {
  const keys = Object.keys(event.state_delta || {});
  const text = keys.length ? `operator edited state: ${keys.join(", ")}` : "operator event";
  const reason = event.reason ? ` — “${event.reason}”` : "";
  return el("li", {
    class: "msg msg-note",
    attrs: { "data-event-id": event.id },
    children: [
      el("span", { text: text + reason }),
      el("time", { text: formatClock(event.timestamp) }),
    ],
  });
}

/**
 * A tool call's arguments or a tool result, folded.
 * @param {string} cls @param {string} label @param {string} name @param {unknown} payload
 */
function toolBlock(cls, label, name, payload) {
  return el("details", {
    class: `tool ${cls}`,
    children: [
      el("summary", {
        children: [
          el("span", { class: "tool-tag", text: label }),
          name ? el("code", { class: "tool-name", text: name }) : null,
        ],
      }),
      el("pre", { class: "json", text: formatJson(payload ?? {}) }),
    ],
  });
}

/**
 * A stored user message's bubble, holding its part.
 *
 * @param {StoredEvent} event
 * @param {HTMLElement} part from {@link renderEvent}
 * @returns {HTMLElement}
 */
export function userBubble(event, part) {
  const node = bubble(USER, "msg msg-user", event.timestamp);
  node.dataset.invocationId = event.invocation_id || "";
  node.append(part);
  return node;
}

/**
 * An empty agent's bubble for an event's invocation (parts go in with {@link addPart}).
 *
 * @param {StoredEvent} event
 * @returns {HTMLElement}
 */
export function agentBubble(event) {
  const node = bubble(event.author, "msg msg-agent", event.timestamp);
  node.dataset.invocationId = event.invocation_id || "";
  return node;
}

/**
 * The user's message being sent (`.pending`), stamped now.
 *
 * @param {string} text shown as plain text
 * @returns {HTMLElement}
 */
export function pendingBubble(text) {
  const node = bubble(USER, "msg msg-user pending", Date.now() / 1000);
  node.append(el("div", { class: "msg-body plain", text }));
  return node;
}

/**
 * An agent's streamed text (`.streaming`), stamped now: chunks go into `text`.
 *
 * @param {string} author
 * @returns {{node: HTMLElement, text: Text}}
 */
export function streamBubble(author) {
  const node = bubble(author, "msg msg-agent streaming", Date.now() / 1000);
  const text = document.createTextNode("");
  node.append(el("div", { class: "msg-body plain", children: [text] }));
  return { node, text };
}

/** An empty bubble: who and when. @param {string} author @param {string} cls @param {number} timestamp */
function bubble(author, cls, timestamp) {
  return el("li", {
    class: cls,
    attrs: { "data-author": author },
    children: [
      el("div", {
        class: "msg-meta",
        children: [
          el("span", { class: "msg-author", text: author === USER ? "you" : author }),
          el("time", { text: formatClock(timestamp) }),
        ],
      }),
    ],
  });
}

/**
 * The "working" line shown while a run is queued or running; with `stop`, a Stop button.
 *
 * @param {string} agentName
 * @param {(() => void)|null} [stop] cancels the run under way
 * @returns {HTMLElement}
 */
export function workingItem(agentName, stop) {
  const item = el("li", {
    class: "msg msg-working",
    attrs: { "aria-label": "The agent is working" },
    children: [
      el("span", { class: "dots", children: [el("i"), el("i"), el("i")] }),
      el("span", { text: `${agentName} is working…` }),
    ],
  });
  if (stop) {
    const button = el("button", {
      class: "link small stop",
      text: "Stop",
      attrs: { type: "button", title: "Cancel the run under way: it stops at its next step" },
    });
    button.addEventListener("click", stop);
    item.append(button);
  }
  return item;
}

/**
 * A failed request of ours, announced.
 *
 * @param {{code?: string, message?: string}} error
 * @returns {HTMLElement}
 */
export function errorItem(error) {
  return el("li", {
    class: "msg msg-error",
    attrs: { role: "alert" },
    children: [
      el("strong", { text: error.code || "error" }),
      " ",
      el("span", { text: error.message || "" }),
    ],
  });
}

/**
 * The note of a failed or cancelled run no event tells about.
 *
 * @param {{status: string, error?: string}} run
 * @param {string} id the run's id
 * @param {string} invocation the run's invocation ("" when unknown)
 * @returns {HTMLElement} with `data-run-id` and `data-run-invocation`
 */
export function runNote(run, id, invocation) {
  const cancelled = run.status === "cancelled";
  return el("li", {
    class: cancelled ? "msg msg-cancelled" : "msg msg-error",
    attrs: { "data-run-id": id, "data-run-invocation": invocation },
    children: outcomeText(cancelled, cancelled ? "run cancelled" : "run failed", run.error),
  });
}

/**
 * The label and text of an outcome: "failed"-red or "cancelled"-grey.
 * @param {boolean} cancelled @param {string} label @param {unknown} message
 */
function outcomeText(cancelled, label, message) {
  let text = typeof message === "string" ? message : "";
  if (cancelled) text = text.replace(/^cancelled\b[.:]?\s*/i, ""); // the label says it
  const gap = cancelled ? " — " : " ";
  return [el("strong", { text: label }), text ? gap : "", text ? el("span", { text }) : ""];
}

// ── questions asked of built items ─────────────────────────────────────────────────────────

/**
 * Append a part to a bubble; a part with an error marks the bubble.
 *
 * @param {HTMLElement} bubble
 * @param {HTMLElement} part
 * @returns {HTMLElement} the bubble
 */
export function addPart(bubble, part) {
  bubble.append(part);
  if (part.classList.contains("has-error")) bubble.classList.add("has-error");
  return bubble;
}

/**
 * The agent's bubble to add an event to: the last item of `container` (skipping `working`
 * and streamed text), if it is this agent's in this invocation.
 *
 * @param {ParentNode} container
 * @param {StoredEvent} event
 * @param {HTMLElement|null} working
 * @returns {HTMLElement|null}
 */
export function lastBubbleOf(container, event, working) {
  let last = /** @type {HTMLElement|null} */ (container.lastElementChild); // the list's items
  // Passed over: the working line, streamed drafts, a run's usage line (an event of an
  // ended run arriving late still joins its bubble above the line).
  while (last && (last === working || last.classList.contains("streaming") || last.classList.contains("msg-usage"))) {
    last = /** @type {HTMLElement|null} */ (last.previousElementSibling);
  }
  const same =
    last &&
    last.classList.contains("msg-agent") &&
    last.dataset.author === event.author &&
    last.dataset.invocationId === (event.invocation_id || "");
  return same ? last : null;
}

/**
 * Whether two items are stored bubbles of one agent in one invocation.
 *
 * @param {HTMLElement} a
 * @param {HTMLElement} b
 * @returns {boolean}
 */
export function sameBubble(a, b) {
  const stored = (/** @type {HTMLElement} */ node) => node.classList.contains("msg-agent") && !node.matches(".streaming");
  return (
    stored(a) &&
    stored(b) &&
    a.dataset.author === b.dataset.author &&
    a.dataset.invocationId === b.dataset.invocationId
  );
}

/**
 * The nodes of stored events in an item (the item itself for an operator's note).
 *
 * @param {HTMLElement} node
 * @returns {HTMLElement[]}
 */
export function eventNodes(node) {
  const inside = /** @type {HTMLElement[]} */ ([...node.querySelectorAll("[data-event-id]")]);
  return node.dataset.eventId ? [node, ...inside] : inside;
}

/**
 * The seqs of an item's events.
 *
 * @param {HTMLElement} node
 * @returns {number[]|null} null when one has none (the item could not be loaded again)
 */
export function seqsOf(node) {
  const seqs = [];
  for (const part of eventNodes(node)) {
    const seq = Number(part.dataset.seq);
    if (part.dataset.seq === undefined || !Number.isFinite(seq)) return null;
    seqs.push(seq);
  }
  return seqs;
}
