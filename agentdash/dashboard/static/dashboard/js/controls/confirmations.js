/**
 * Tool confirmations on the session page (docs/PROTOCOL.md, "confirmation.answer"): each
 * request a run waits on is a card in the chat — the hint, the tool and its arguments, the
 * payload in a JSON editor, a reason — answered with Approve (or "Approve with edits" once the
 * payload changed) or Deny — a breakpoint's with Resume, Step or Cancel run; and a "waiting" mark with a running clock on the paused tool's
 * row of the timeline. The list is read over HTTP when a run of the session waits (or one
 * changes while requests are shown), so every open page shows the same requests.
 *
 * @module dashboard/confirmations
 */

import { el } from "../../../core/js/dom.js";
import { formatDuration, formatJson } from "../common/format.js";

const REFRESH_DELAY_MS = 150;
const CLOCK_MS = 1_000;

/**
 * @typedef {object} Pending one request (the `confirmations/` endpoint)
 * @property {string} request_id
 * @property {string} agent
 * @property {string} tool
 * @property {object} args
 * @property {string} hint
 * @property {any} payload
 * @property {number} asked_at Unix seconds
 * @property {{trace_id: string, span_id: string}|null} span the paused tool call
 * @property {{host: string, pid: number|null, connected: boolean}} [remote] the process of
 *   an app that runs elsewhere, where the step waits (its id begins `remote-`)
 */

/**
 * Whether a request is a breakpoint's (runtime.debug.breakpoints): resume, step or cancel.
 *
 * @param {Pending} request
 * @returns {boolean}
 */
function isBreakpoint(request) {
  const payload = request.payload;
  return Boolean(payload) && typeof payload === "object" && !Array.isArray(payload) && "breakpoint" in payload;
}

export class Confirmations {
  /**
   * @param {object} options
   * @param {HTMLElement} options.root the chat's `#confirmations` section
   * @param {() => Promise<{pending: Pending[]}>} options.fetchPending
   * @param {(message: object) => boolean} options.send a socket message; false when offline
   * @param {{markWaiting: (marks: {trace: string, id: string, since: number}[]) => void,
   *   select: (traceId: string, spanId: string) => void}} options.timeline
   */
  constructor({ root, fetchPending, send, timeline }) {
    this.root = root;
    this.fetchPending = fetchPending;
    this.send = send;
    this.timeline = timeline;
    /** @type {Map<string, {card: HTMLElement, parts: any, pending: Pending}>} */
    this.cards = new Map();
    this.timer = 0;
    this.clock = 0;
    this.reading = false;
    this.again = false;
  }

  /**
   * A run changed: only a run that waits can have asked, and only a shown request can have
   * been answered meanwhile — anything else reads nothing.
   *
   * @param {{status: string}} run
   */
  applyRun(run) {
    if (run.status === "waiting" || this.cards.size) this.refresh();
  }

  /** Read the pending requests again (soon: a burst of run changes makes one read). */
  refresh() {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = 0;
      this.read();
    }, REFRESH_DELAY_MS);
  }

  /** @private */
  async read() {
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    try {
      const answer = await this.fetchPending();
      this.show(Array.isArray(answer.pending) ? answer.pending : []);
    } catch {
      // kept as shown; the next run change reads again
    } finally {
      this.reading = false;
      if (this.again) {
        this.again = false;
        this.refresh();
      }
    }
  }

  /**
   * Cards for these requests: new ones added, answered ones removed, the others kept as they
   * are (with what a person typed in them).
   *
   * @param {Pending[]} pending
   */
  show(pending) {
    const ids = new Set(pending.map((p) => p.request_id));
    for (const [id, held] of this.cards) {
      if (!ids.has(id)) {
        held.card.remove();
        this.cards.delete(id);
      }
    }
    for (const request of pending) {
      if (this.cards.has(request.request_id)) continue;
      const built = this.card(request);
      this.cards.set(request.request_id, built);
      this.root.append(built.card);
    }
    this.root.hidden = this.cards.size === 0;
    this.timeline.markWaiting(
      /** @type {(Pending & {span: {trace_id: string, span_id: string}})[]} */ (pending.filter((p) => p.span))
        .map((p) => ({ trace: p.span.trace_id, id: p.span.span_id, since: p.asked_at * 1e9 })),
    );
    this.tick();
    if (this.cards.size && !this.clock) this.clock = setInterval(() => this.tick(), CLOCK_MS);
    if (!this.cards.size && this.clock) {
      clearInterval(this.clock);
      this.clock = 0;
    }
  }

  /**
   * The server's answer to one of this page's `confirmation.answer` messages.
   *
   * @param {{type: string, ref?: string, request_id?: string, message?: string, code?: string}} message
   * @returns {boolean} whether it was one
   */
  answer(message) {
    if (message.ref !== "confirmation.answer") return false;
    const held = message.request_id ? this.cards.get(message.request_id) : undefined;
    if (message.type === "ack") {
      if (held) held.parts.status.textContent = "Answered: the run goes on.";
      this.refresh();
      return true;
    }
    if (held) {
      held.parts.busy(false);
      held.parts.problem.textContent = message.message || "The answer was refused.";
    }
    if (message.code === "conflict") this.refresh(); // answered elsewhere meanwhile
    return true;
  }

  /** @private The waiting clocks. */
  tick() {
    const now = Date.now() / 1000;
    for (const { parts, pending } of this.cards.values()) {
      const waited = Math.max(0, now - pending.asked_at);
      parts.clock.textContent = formatDuration(waited * 1e9);
    }
  }

  /** @private One request's card. @param {Pending} request */
  card(request) {
    const controls = cardControls(request);
    const { payload, approve, deny, step, where, problem, status, clock, original, approveText } = controls;
    const parts = {
      problem,
      status,
      clock,
      /** @param {boolean} on */
      busy(on) {
        approve.disabled = on;
        deny.disabled = on;
        if (step) step.disabled = on;
        payload.readOnly = on;
      },
    };
    payload.addEventListener("input", () => {
      approve.textContent = payload.value.trim() !== original.trim() ? `${approveText} with edits` : approveText;
      problem.textContent = "";
    });
    const submit = (/** @type {Decision} */ decision) => this.sendAnswer(request.request_id, decision, controls, parts);
    approve.addEventListener("click", () => submit("approve"));
    deny.addEventListener("click", () => submit(controls.paused ? "cancel" : "deny"));
    step?.addEventListener("click", () => submit("step"));
    where?.addEventListener("click", () => {
      if (request.span) this.timeline.select(request.span.trace_id, request.span.span_id);
    });
    return { card: cardLayout(request, controls), parts, pending: request };
  }

  /**
   * @private Send a card's answer, unless it lacks what it needs (a reason to refuse, a
   * payload that parses): then the card says so and nothing is sent.
   * @param {string} id @param {Decision} decision @param {Controls} controls
   * @param {{busy: (on: boolean) => void}} parts
   */
  sendAnswer(id, decision, controls, parts) {
    const { payload, reason, problem, status, original } = controls;
    problem.textContent = "";
    /** @type {Record<string, any>} */
    const message = { type: "confirmation.answer", request_id: id, decision, reason: reason.value.trim() };
    if ((decision === "deny" || decision === "cancel") && !message.reason) {
      problem.textContent = `Say why it is ${decision === "deny" ? "denied" : "cancelled"} (the reason is kept in the audit log).`;
      reason.focus();
      return;
    }
    if ((decision === "approve" || decision === "step") && payload.value.trim() !== original.trim()) {
      try {
        message.payload = JSON.parse(payload.value);
      } catch (/** @type {any} */ error) {
        problem.textContent = `The payload is not JSON: ${error.message}`;
        payload.focus();
        return;
      }
    }
    if (!this.send(message)) {
      problem.textContent = "Not connected: nothing was sent.";
      return;
    }
    parts.busy(true);
    status.textContent = "Sending…";
  }
}

/** @typedef {"approve"|"deny"|"step"|"cancel"} Decision */
/** @typedef {ReturnType<typeof cardControls>} Controls */

/** A card's inputs, buttons and lines, not yet placed. @param {Pending} request */
function cardControls(request) {
  const original = formatJson(request.payload ?? null);
  const payload = el("textarea", {
    class: "confirm-payload json",
    attrs: { rows: Math.min(10, original.split("\n").length + 1), spellcheck: "false", "aria-label": "Payload (JSON)" },
  });
  payload.value = original;
  const reason = el("input", {
    class: "confirm-reason",
    attrs: { type: "text", maxlength: "1000", placeholder: "Why? (needed to deny)", "aria-label": "Reason" },
  });
  const paused = isBreakpoint(request);
  const approveText = paused ? "Resume" : "Approve";
  return {
    original,
    paused,
    approveText,
    payload,
    reason,
    approve: el("button", { class: "confirm-approve", text: approveText, attrs: { type: "button", "data-decision": "approve" } }),
    deny: el("button", { class: "confirm-deny", text: paused ? "Cancel run" : "Deny", attrs: { type: "button", "data-decision": paused ? "cancel" : "deny" } }),
    step: paused
      ? el("button", { class: "confirm-step", text: "Step", attrs: { type: "button", "data-decision": "step", title: "Go on, and pause again before the next step" } })
      : null,
    problem: el("p", { class: "confirm-problem form-error", attrs: { role: "alert" } }),
    status: el("p", { class: "confirm-status form-status", attrs: { role: "status" } }),
    clock: el("span", { class: "confirm-clock" }),
    where: request.span ? el("button", { class: "confirm-where", text: "Show on timeline", attrs: { type: "button" } }) : null,
  };
}

/** The card: what is asked, the tool and its arguments, the controls. @param {Pending} request @param {Controls} c */
function cardLayout(request, c) {
  const id = request.request_id;
  const title = `confirm-${id.replace(/[^\w-]/g, "_")}`;
  return el("article", {
    class: "confirm-card",
    attrs: { "data-request-id": id, "aria-labelledby": title },
    children: [
      el("header", {
        class: "confirm-head",
        children: [
          el("span", { class: "badge run-waiting", text: c.paused ? "paused at a breakpoint" : "waiting for approval" }),
          c.clock,
        ],
      }),
      el("h3", { class: "confirm-hint", text: request.hint || `Run ${request.tool}?`, attrs: { id: title } }),
      el("dl", {
        class: "confirm-facts",
        children: [
          el("dt", { text: "Tool" }),
          el("dd", { children: [el("code", { text: request.tool || "?" }), ` · ${request.agent}`] }),
          el("dt", { text: "Arguments" }),
          el("dd", { children: [el("pre", { class: "json", text: formatJson(request.args ?? {}) })] }),
        ],
      }),
      request.remote ? remoteLine(request.remote) : null,
      el("label", { class: "confirm-label", text: "Payload (JSON, editable)", children: [c.payload] }),
      el("label", { class: "confirm-label", text: "Reason", children: [c.reason] }),
      c.problem,
      el("div", { class: "confirm-actions", children: [c.approve, c.step, c.deny, c.where] }),
      c.status,
    ],
  });
}

/**
 * Where a remote app's step waits, and whether its process still asks.
 *
 * @param {{host: string, pid: number|null, connected: boolean}} remote
 */
function remoteLine(remote) {
  const where = `${remote.host || "?"} (pid ${remote.pid ?? "?"})`;
  const text = remote.connected
    ? `Waits in the app's process on ${where}; it goes on when it takes your answer.`
    : `The app's process on ${where} is not connected: your answer is kept until it asks again.`;
  return el("p", { class: `confirm-remote muted small${remote.connected ? "" : " form-error"}`, text });
}
