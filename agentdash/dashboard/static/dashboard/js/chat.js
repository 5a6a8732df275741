/**
 * The chat: the user's and the agents' messages, tool calls and results, errors.
 *
 * Stored agent and user text arrives as `html`, rendered and sanitized by the server, and is
 * inserted ONLY through `setSanitizedHtml`. Everything else — streamed partial text, the text
 * being sent, tool arguments and results, error messages — goes through `textContent`.
 *
 * @module dashboard/chat
 */

import { el, setSanitizedHtml } from "../../core/js/dom.js";
import { formatClock, formatJson } from "./format.js";

const USER = "user";
const OPERATOR = "operator";
const ACTIVE_RUN = new Set(["queued", "running"]);

/**
 * @typedef {object} StoredEvent  an `event` change's data (docs/PROTOCOL.md)
 * @property {string} id
 * @property {string} invocation_id
 * @property {string} author
 * @property {number} timestamp Unix seconds
 * @property {string} [html]
 * @property {{id: string, name: string, args: object}[]} [function_calls]
 * @property {{id: string, name: string, response: object}[]} [function_responses]
 * @property {object} [state_delta]
 * @property {string|null} [error_code]
 * @property {string|null} [error_message]
 * @property {boolean} [final]
 */

export class Chat {
  /**
   * @param {object} parts
   * @param {HTMLOListElement} parts.list the message list
   * @param {HTMLElement} parts.empty shown while there is nothing to show
   * @param {string} parts.agentName the session's agent (for the "working" line)
   */
  constructor({ list, empty, agentName }) {
    this.list = list;
    this.empty = empty;
    this.agentName = agentName;
    /** @type {Map<string, HTMLElement>} stored events by id */
    this.events = new Map();
    /** @type {Map<string, {node: HTMLElement, body: HTMLElement}>} by invocation|author */
    this.streams = new Map();
    /** @type {Map<string, HTMLElement>} messages being sent, by client_id */
    this.pending = new Map();
    /** @type {Map<string, string>} run status by run id */
    this.runs = new Map();
    this.working = el("li", {
      class: "msg msg-working",
      attrs: { "aria-label": "The agent is working" },
      children: [
        el("span", { class: "dots", children: [el("i"), el("i"), el("i")] }),
        el("span", { text: `${agentName} is working…` }),
      ],
    });
  }

  /**
   * Show the user's message at once, before the server stores it.
   *
   * @param {string} clientId echoed back in `chat.accepted`
   * @param {string} text
   */
  addPending(clientId, text) {
    const node = this.bubble(USER, "msg msg-user pending", Date.now() / 1000);
    node.append(el("div", { class: "msg-body plain", text }));
    node.dataset.clientId = clientId;
    this.pending.set(clientId, node);
    this.append(node);
  }

  /**
   * `chat.accepted`: the message was stored and a run queued.
   *
   * @param {{client_id?: string, invocation_id?: string, run_id?: string}} message
   */
  accepted(message) {
    const node = message.client_id ? this.pending.get(message.client_id) : undefined;
    if (node && message.invocation_id) node.dataset.invocationId = message.invocation_id;
  }

  /**
   * A request of ours failed (an `error` message for `chat.send`, or one without a `ref`).
   *
   * @param {{code?: string, message?: string}} error
   */
  showError(error) {
    for (const node of this.pending.values()) {
      if (!node.dataset.invocationId) node.classList.add("failed");
    }
    const code = error.code || "error";
    this.append(
      el("li", {
        class: "msg msg-error",
        attrs: { role: "alert" },
        children: [el("strong", { text: code }), " ", el("span", { text: error.message || "" })],
      }),
    );
  }

  /**
   * `partial`: streamed model text, shown as plain text until the stored event replaces it.
   *
   * @param {{invocation_id: string, author: string, text: string}} partial
   */
  applyPartial(partial) {
    const key = `${partial.invocation_id}|${partial.author}`;
    let stream = this.streams.get(key);
    if (!stream) {
      const node = this.bubble(partial.author, "msg msg-agent streaming", Date.now() / 1000);
      const body = el("div", { class: "msg-body plain" });
      node.append(body);
      stream = { node, body };
      this.streams.set(key, stream);
      this.append(node);
    }
    stream.body.textContent += typeof partial.text === "string" ? partial.text : "";
    this.keepWorkingLast();
  }

  /**
   * A stored event: a message, tool calls and results, an error. Consecutive events of one
   * agent in one invocation share a bubble. A stored event replaces its pending or streamed
   * version; an event seen before (by id) is redrawn in place.
   *
   * @param {StoredEvent} event
   */
  applyEvent(event) {
    this.dropStream(event);
    if (event.author === OPERATOR) return this.place(event, this.renderOperatorNote(event));
    const part = this.renderPart(event);
    if (part === null) return;
    const seen = this.events.get(event.id);
    if (seen) {
      seen.replaceWith(part);
    } else if (event.author === USER) {
      const node = this.bubble(USER, "msg msg-user", event.timestamp);
      node.dataset.invocationId = event.invocation_id || "";
      node.append(part);
      const pending = this.takePending(event);
      if (pending) pending.replaceWith(node);
      else this.append(node);
    } else {
      let node = this.lastBubbleOf(event.author, event.invocation_id);
      if (!node) {
        node = this.bubble(event.author, "msg msg-agent", event.timestamp);
        node.dataset.invocationId = event.invocation_id || "";
        this.append(node);
      }
      node.append(part);
      if (part.classList.contains("has-error")) node.classList.add("has-error");
      this.keepWorkingLast();
    }
    this.events.set(event.id, part);
  }

  /**
   * A run's status: the "working" line while one is queued or running; a failure is shown.
   *
   * @param {{id: string|number, status: string, error?: string}} run
   */
  applyRun(run) {
    const id = String(run.id);
    const before = this.runs.get(id);
    this.runs.set(id, run.status);
    const active = [...this.runs.values()].some((status) => ACTIVE_RUN.has(status));
    if (active) this.append(this.working);
    else this.working.remove();
    if (run.status === "failed" && before !== "failed") {
      this.showError({ code: "run failed", message: run.error || "The run failed." });
    }
    if (!ACTIVE_RUN.has(run.status)) this.dropAllStreams(run);
  }

  /** Scroll to the newest message. */
  scrollToEnd() {
    this.list.scrollTop = this.list.scrollHeight;
  }

  /** @private The content of one event, or null when it has nothing to show. */
  renderPart(event) {
    const calls = Array.isArray(event.function_calls) ? event.function_calls : [];
    const responses = Array.isArray(event.function_responses) ? event.function_responses : [];
    const hasText = typeof event.html === "string" && event.html.trim() !== "";
    const hasError = Boolean(event.error_code || event.error_message);
    if (!hasText && !calls.length && !responses.length && !hasError) return null;
    const part = el("div", { class: "msg-part", attrs: { "data-event-id": event.id } });
    if (hasText) {
      const body = el("div", { class: "msg-body md" });
      setSanitizedHtml(body, event.html); // server-sanitized: the one HTML sink
      part.append(body);
    }
    for (const call of calls) {
      part.append(this.toolBlock("tool-call", "call", call.name, call.args));
    }
    for (const response of responses) {
      part.append(this.toolBlock("tool-result", "result", response.name, response.response));
    }
    if (hasError) {
      part.classList.add("has-error");
      part.append(
        el("div", {
          class: "msg-error-box",
          attrs: { role: "alert" },
          children: [
            el("strong", { text: event.error_code || "error" }),
            " ",
            el("span", { text: event.error_message || "" }),
          ],
        }),
      );
    }
    return part;
  }

  /** @private An operator note, placed (or redrawn) like any message. */
  place(event, node) {
    const seen = this.events.get(event.id);
    if (seen) seen.replaceWith(node);
    else this.append(node);
    this.events.set(event.id, node);
  }

  /** @private The agent's bubble to add to: the last message, if it is this agent's in this
   * invocation. */
  lastBubbleOf(author, invocationId) {
    let last = this.list.lastElementChild;
    while (last && (last === this.working || last.classList.contains("streaming"))) {
      last = last.previousElementSibling;
    }
    const same =
      last && last.classList.contains("msg-agent") && last.dataset.author === author &&
      last.dataset.invocationId === (invocationId || "");
    return same ? /** @type {HTMLElement} */ (last) : null;
  }

  /** @private */
  renderOperatorNote(event) {
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

  /** @private */
  toolBlock(cls, label, name, payload) {
    return el("details", {
      class: `tool ${cls}`,
      children: [
        el("summary", {
          children: [
            el("span", { class: "tool-tag", text: label }),
            el("code", { class: "tool-name", text: name || "?" }),
          ],
        }),
        el("pre", { class: "json", text: formatJson(payload ?? {}) }),
      ],
    });
  }

  /** @private */
  bubble(author, cls, timestamp) {
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

  /** @private The pending bubble a stored user event replaces. */
  takePending(event) {
    if (event.author !== USER) return undefined;
    for (const [clientId, node] of this.pending) {
      if (!node.dataset.invocationId || node.dataset.invocationId === event.invocation_id) {
        this.pending.delete(clientId);
        return node;
      }
    }
    return undefined;
  }

  /** @private */
  dropStream(event) {
    const hasText = typeof event.html === "string" && event.html.trim() !== "";
    if (!hasText && !event.final) return;
    const key = `${event.invocation_id}|${event.author}`;
    const stream = this.streams.get(key);
    if (stream) {
      stream.node.remove();
      this.streams.delete(key);
    }
  }

  /** @private A finished run leaves no streamed text behind (its events are stored). */
  dropAllStreams(run) {
    for (const [key, stream] of this.streams) {
      if (!run.invocation_id || key.startsWith(`${run.invocation_id}|`)) {
        stream.node.remove();
        this.streams.delete(key);
      }
    }
  }

  /** @private */
  append(node) {
    const nearEnd = this.list.scrollHeight - this.list.scrollTop - this.list.clientHeight < 80;
    this.list.append(node);
    this.keepWorkingLast();
    this.empty.hidden = true;
    if (nearEnd) this.scrollToEnd();
  }

  /** @private */
  keepWorkingLast() {
    if (this.working.isConnected && this.list.lastElementChild !== this.working) {
      this.list.append(this.working);
    }
  }
}
