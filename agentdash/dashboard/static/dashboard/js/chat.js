/**
 * The chat: the user's and the agents' messages, tool calls and results, errors.
 *
 * Stored agent and user text arrives as `html`, rendered and sanitized by the server, and is
 * inserted ONLY through `setSanitizedHtml`. Everything else — streamed partial text, the text
 * being sent, tool arguments and results, error messages — goes through `textContent`.
 *
 * Paged: the page hands over the latest events ({@link Chat#loadLatest}) and a cursor; older
 * pages come from `fetchOlder` when the reader nears the top of the list (an
 * IntersectionObserver on the first item, which is also a "Load older messages" button).
 * Layout is never read per event: whether the reader is at the bottom is tracked from scroll
 * events, and after appends the list scrolls to its end at most once per animation frame. A
 * page inserted above keeps the reader's place (the list's height is measured once before and
 * once after the page). A very long session keeps at most {@link MAX_ITEMS} items: past that,
 * with the reader at the bottom, the oldest are dropped and come back through the cursor.
 *
 * @module dashboard/chat
 */

import { el, setSanitizedHtml } from "../../core/js/dom.js";
import { formatClock, formatJson } from "./format.js";

const USER = "user";
const OPERATOR = "operator";
const ACTIVE_RUN = new Set(["queued", "running"]);
const ENDED_BADLY = new Set(["failed", "cancelled"]);
const CANCELLED = "CANCELLED"; // the error code of the event that tells a run was stopped
const NEAR_END_PX = 80; // scrolling down to within this of the end sticks to the end again
const AT_END_PX = 4; // scrolling up unsticks unless the list is (still) at its very end
const OLDER_MARGIN = "800px 0px 0px 0px"; // start loading older pages this far above the view
const MAX_ITEMS = 600; // list items past which the oldest are dropped (the reader at the end)
const KEEP_ITEMS = 450; // ... down to this many
const OLDER_LABELS = {
  idle: "Load older messages",
  loading: "Loading older messages…",
  failed: "Older messages could not be loaded — try again",
};

/**
 * @typedef {object} StoredEvent  an `event` change's data (docs/PROTOCOL.md)
 * @property {string} id
 * @property {string} invocation_id
 * @property {string} author
 * @property {number} timestamp Unix seconds
 * @property {number} [position] its place in the session (1, 2, 3, …): the cursor of older pages
 * @property {string} [html]
 * @property {{id: string, name: string, args: object}[]} [function_calls]
 * @property {{id: string, name: string, response: object}[]} [function_responses]
 * @property {object} [state_delta]
 * @property {string|null} [error_code]
 * @property {string|null} [error_message]
 * @property {boolean} [final]
 */

/** @typedef {{events: StoredEvent[], before: number|null}} EventPage */

export class Chat {
  /**
   * @param {object} parts
   * @param {HTMLOListElement} parts.list the message list (it scrolls)
   * @param {HTMLElement} parts.empty shown while there is nothing to show
   * @param {string} parts.agentName the session's agent (for the "working" line)
   * @param {(before: number) => Promise<EventPage>} [parts.fetchOlder] the events before a
   *   position, oldest first, and the cursor for the page before them (null: none older)
   */
  constructor({ list, empty, agentName, fetchOlder }) {
    this.list = list;
    this.empty = empty;
    this.agentName = agentName;
    this.fetchOlder = typeof fetchOlder === "function" ? fetchOlder : null;
    /** @type {Map<string, HTMLElement>} shown events by id (a bubble's part, or a note) */
    this.events = new Map();
    /** @type {Map<string, {node: HTMLElement, text: Text}>} by invocation|author */
    this.streams = new Map();
    /** @type {Map<string, HTMLElement>} messages being sent, by client_id */
    this.pending = new Map();
    /** @type {Map<string, object>} runs by id, as last told */
    this.runs = new Map();
    /** @type {Set<string>} ids of the runs queued or running */
    this.active = new Set();
    /** @type {Set<string>} invocations whose outcome an event tells (an error, a cancel) */
    this.reported = new Set();
    /** @type {Map<string, HTMLElement>} a failed or cancelled run's note, by run id (shown
     * only where no event tells the outcome) */
    this.runNotes = new Map();
    /** @type {number|null} the cursor for older events; null: there are none */
    this.before = null;
    this.olderState = "idle";
    this.stuck = true; // the reader is at the end: new messages scroll into view
    this.lastTop = 0;
    this.frame = 0;
    this.watching = false;

    this.working = el("li", {
      class: "msg msg-working",
      attrs: { "aria-label": "The agent is working" },
      children: [
        el("span", { class: "dots", children: [el("i"), el("i"), el("i")] }),
        el("span", { text: `${agentName} is working…` }),
      ],
    });
    this.olderButton = el("button", {
      class: "link",
      text: OLDER_LABELS.idle,
      attrs: { type: "button" },
    });
    this.olderButton.addEventListener("click", () => this.loadOlder());
    this.older = el("li", { class: "msg-older", attrs: { hidden: true } });
    this.older.append(this.olderButton);
    list.prepend(this.older);

    list.addEventListener("scroll", () => this.onScroll(), { passive: true });
    this.observer =
      typeof IntersectionObserver === "function"
        ? new IntersectionObserver((entries) => this.onOlderSeen(entries), {
            root: list,
            rootMargin: OLDER_MARGIN,
          })
        : null;
    // Shown again (a tab on a phone) or resized: keep the end in view. Called after layout.
    if (typeof ResizeObserver === "function") {
      new ResizeObserver(() => {
        if (this.stuck && list.clientHeight > 0) this.toEnd();
      }).observe(list);
    }
  }

  /**
   * The latest stored events, oldest first (the snapshot's), and the cursor for older ones.
   * Events already shown are skipped; the list scrolls to its end.
   *
   * @param {StoredEvent[]} events
   * @param {number|null} before pass to `fetchOlder` for the page before these; null: none
   */
  loadLatest(events, before) {
    this.insertPage(Array.isArray(events) ? events : []);
    this.before = cursor(before);
    this.showOlder();
    this.placeRunNotes();
    this.scrollToEnd();
  }

  /**
   * Fetch and show the page before the oldest shown event (the sentinel's button, or the
   * sentinel coming near the view). One page at a time; a failure leaves a retry button.
   *
   * @returns {Promise<void>}
   */
  async loadOlder() {
    if (this.olderState === "loading" || this.before === null || !this.fetchOlder) return;
    const before = this.before;
    this.setOlder("loading");
    let page;
    try {
      page = await this.fetchOlder(before);
    } catch {
      this.setOlder("failed");
      return;
    }
    this.insertPage(Array.isArray(page?.events) ? page.events : []);
    const next = cursor(page?.before);
    this.before = next !== null && next < before ? next : null; // a cursor must move back
    this.placeRunNotes();
    this.setOlder("idle");
    this.watchOlder(); // the page may not have filled the view: the sentinel may still show
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
    this.append(
      el("li", {
        class: "msg msg-error",
        attrs: { role: "alert" },
        children: [
          el("strong", { text: error.code || "error" }),
          " ",
          el("span", { text: error.message || "" }),
        ],
      }),
    );
  }

  /**
   * `partial`: streamed model text, shown as plain text until the stored event replaces it.
   * Each chunk is appended to one text node: nothing else is redrawn.
   *
   * @param {{invocation_id: string, author: string, text: string}} partial
   */
  applyPartial(partial) {
    const key = `${partial.invocation_id}|${partial.author}`;
    let stream = this.streams.get(key);
    if (!stream) {
      const node = this.bubble(partial.author, "msg msg-agent streaming", Date.now() / 1000);
      const text = document.createTextNode("");
      node.append(el("div", { class: "msg-body plain", children: [text] }));
      stream = { node, text };
      this.streams.set(key, stream);
      this.append(node);
    }
    stream.text.appendData(typeof partial.text === "string" ? partial.text : "");
    this.keepWorkingLast();
    this.scheduleEnd();
  }

  /**
   * A stored event (live): a message, tool calls and results, an error. Consecutive events of
   * one agent in one invocation share a bubble. A stored event replaces its pending or
   * streamed version; an event seen before (by id) is redrawn in place.
   *
   * @param {StoredEvent} event
   */
  applyEvent(event) {
    this.dropStream(event);
    const node = this.render(event, undefined, true);
    if (node === null) return;
    const seen = this.events.get(event.id);
    this.events.set(event.id, node);
    if (seen) {
      if (seen.dataset.seq !== undefined) node.dataset.seq ??= seen.dataset.seq;
      seen.replaceWith(node);
    } else if (event.author === OPERATOR) {
      this.append(node);
    } else if (event.author === USER) {
      const bubble = this.userBubble(event, node);
      const pending = this.takePending(event);
      if (pending) pending.replaceWith(bubble);
      else this.append(bubble);
    } else {
      const bubble = lastBubbleOf(this.list, event, this.working);
      if (bubble) {
        addPart(bubble, node);
        this.keepWorkingLast();
        this.scheduleEnd();
      } else {
        this.append(addPart(this.agentBubble(event), node));
      }
    }
    this.outcomeTold(event);
  }

  /**
   * A run's status: the "working" line while one is queued or running. A failed or cancelled
   * run is told once: by its event when one tells it (the server reports most), else by a
   * note after the run's messages.
   *
   * @param {{id: string|number, status: string, invocation_id?: string, error?: string}} run
   */
  applyRun(run) {
    const id = String(run.id);
    const before = this.runs.get(id)?.status;
    this.runs.set(id, run);
    if (ACTIVE_RUN.has(run.status)) this.active.add(id);
    else this.active.delete(id);
    if (this.active.size) this.append(this.working);
    else this.working.remove();
    if (ENDED_BADLY.has(run.status) && before !== run.status) {
      this.noteRun(run, ACTIVE_RUN.has(before ?? ""));
    }
    if (!ACTIVE_RUN.has(run.status)) this.dropAllStreams(run);
  }

  /** Scroll to the newest message (in the next frame) and stay there as messages come. */
  scrollToEnd() {
    this.stuck = true;
    this.scheduleEnd();
  }

  // ── pages ──────────────────────────────────────────────────────────────────────────────

  /** @private Insert stored events (oldest first) above everything shown, keeping the
   * reader's place; a bubble cut by the page boundary is joined again. */
  insertPage(events) {
    const page = document.createDocumentFragment();
    for (const event of events) {
      if (!event || typeof event !== "object" || this.events.has(event.id)) continue;
      const node = this.render(event, undefined, false);
      if (node === null) continue;
      this.events.set(event.id, node);
      if (event.author === OPERATOR) page.append(node);
      else if (event.author === USER) page.append(this.userBubble(event, node));
      else {
        const bubble = lastBubbleOf(page, event, null);
        if (bubble) addPart(bubble, node);
        else page.append(addPart(this.agentBubble(event), node));
      }
      this.outcomeTold(event);
    }
    if (!page.childElementCount) return;
    const first = this.older.nextElementSibling;
    const last = page.lastElementChild;
    if (first && last && sameBubble(last, first)) {
      last.append(...first.querySelectorAll(":scope > .msg-part"));
      if (first.classList.contains("has-error")) last.classList.add("has-error");
      first.remove();
    }
    const list = this.list;
    const height = this.stuck ? 0 : list.scrollHeight;
    this.older.after(page);
    this.empty.hidden = true;
    if (this.stuck) {
      this.scheduleEnd();
    } else {
      list.scrollTop += list.scrollHeight - height;
      this.lastTop = list.scrollTop;
    }
  }

  /** @private The sentinel came near the view: load the page before. */
  onOlderSeen(entries) {
    if (entries.some((entry) => entry.isIntersecting) && this.olderState === "idle") {
      this.loadOlder();
    }
  }

  /** @private (Re)start watching the sentinel: observing again reports whether it shows now. */
  watchOlder() {
    if (!this.observer) return;
    this.watching = true;
    this.observer.unobserve(this.older);
    this.observer.observe(this.older);
  }

  /** @private */
  setOlder(state) {
    this.olderState = state;
    this.olderButton.textContent = OLDER_LABELS[state];
    this.olderButton.setAttribute("aria-disabled", String(state === "loading"));
    this.list.setAttribute("aria-busy", String(state === "loading"));
    this.showOlder();
  }

  /** @private */
  showOlder() {
    this.older.hidden = this.before === null || !this.fetchOlder;
  }

  /** @private Over MAX_ITEMS items, with the reader at the end: drop the oldest (whole
   * items whose events all have a seq, so that the cursor brings them back). */
  trim() {
    const list = this.list;
    if (this.olderState === "loading" || list.childElementCount <= MAX_ITEMS) return;
    let excess = list.childElementCount - KEEP_ITEMS;
    let last = -1;
    const dropped = [];
    for (let node = this.older.nextElementSibling; node && excess > 0; ) {
      if (node === this.working || node.matches(".streaming, .pending")) break;
      const seqs = seqsOf(node);
      if (seqs === null) break;
      for (const seq of seqs) last = Math.max(last, seq);
      dropped.push(node);
      excess -= 1;
      node = node.nextElementSibling;
    }
    for (const node of dropped) {
      for (const part of eventNodes(node)) this.events.delete(part.dataset.eventId || "");
      node.remove();
    }
    for (const [id, note] of this.runNotes) if (!note.isConnected) this.runNotes.delete(id);
    if (last >= 0) {
      this.before = last + 1; // every event older than the ones kept is behind the cursor
      this.showOlder();
    }
  }

  // ── outcomes of runs ───────────────────────────────────────────────────────────────────

  /** @private An event telling an error or a cancel tells its run's outcome: a note said
   * for the same run goes. */
  outcomeTold(event) {
    const invocation = event.invocation_id || "";
    if (!invocation || !(event.error_code || event.error_message)) return;
    this.reported.add(invocation);
    for (const [id, note] of this.runNotes) {
      if (note.dataset.runInvocation === invocation) {
        note.remove();
        this.runNotes.delete(id);
      }
    }
  }

  /** @private A failed or cancelled run no event tells about: a note after its messages
   * (or at the end, when it ended while the page watched). */
  noteRun(run, live) {
    const id = String(run.id);
    const invocation = run.invocation_id || "";
    if (this.runNotes.has(id) || (invocation && this.reported.has(invocation))) return;
    const after = invocation ? this.lastOfInvocation(invocation) : null;
    if (!after && !live) return;
    const cancelled = run.status === "cancelled";
    const note = el("li", {
      class: cancelled ? "msg msg-cancelled" : "msg msg-error",
      attrs: { "data-run-id": id, "data-run-invocation": invocation },
      children: outcomeText(cancelled, cancelled ? "run cancelled" : "run failed", run.error),
    });
    this.runNotes.set(id, note);
    if (after) {
      after.after(note);
      this.keepWorkingLast();
      this.scheduleEnd();
    } else {
      this.append(note);
    }
  }

  /** @private Notes for the runs known before their messages were shown. */
  placeRunNotes() {
    for (const run of this.runs.values()) {
      if (ENDED_BADLY.has(run.status)) this.noteRun(run, false);
    }
  }

  /** @private The last item of an invocation's messages, or null. */
  lastOfInvocation(invocation) {
    const found = this.list.querySelectorAll(
      `:scope > [data-invocation-id="${CSS.escape(invocation)}"]`,
    );
    return found.length ? /** @type {HTMLElement} */ (found[found.length - 1]) : null;
  }

  // ── rendering ──────────────────────────────────────────────────────────────────────────

  /** @private One event's node: an operator's note, or the part of a bubble; null when it
   * has nothing to show. `live`: errors are announced (not for history). */
  render(event, seq, live) {
    const node =
      event.author === OPERATOR ? this.renderOperatorNote(event) : this.renderPart(event, live);
    if (node === null) return null;
    const known = typeof event.position === "number" ? event.position : seq;
    if (typeof known === "number" && Number.isFinite(known)) node.dataset.seq = String(known);
    return node;
  }

  /** @private The content of one event, or null when it has nothing to show. */
  renderPart(event, live) {
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
  userBubble(event, part) {
    const node = this.bubble(USER, "msg msg-user", event.timestamp);
    node.dataset.invocationId = event.invocation_id || "";
    node.append(part);
    return node;
  }

  /** @private */
  agentBubble(event) {
    const node = this.bubble(event.author, "msg msg-agent", event.timestamp);
    node.dataset.invocationId = event.invocation_id || "";
    return node;
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

  // ── the end of the list ────────────────────────────────────────────────────────────────

  /** @private Add at the end; the view follows in the next frame if the reader is there. */
  append(node) {
    this.list.append(node);
    this.keepWorkingLast();
    this.empty.hidden = true;
    this.scheduleEnd();
  }

  /** @private */
  keepWorkingLast() {
    if (this.working.isConnected && this.list.lastElementChild !== this.working) {
      this.list.append(this.working);
    }
  }

  /** @private At most one scroll (one layout) per frame, however many appends. */
  scheduleEnd() {
    if (this.frame || !this.stuck) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      if (!this.stuck) return;
      this.trim();
      this.toEnd();
      if (!this.watching) this.watchOlder();
    });
  }

  /** @private */
  toEnd() {
    const list = this.list;
    list.scrollTop = list.scrollHeight;
    this.lastTop = list.scrollTop;
  }

  /** @private Scrolling up leaves the end; scrolling down to near it sticks again. Our own
   * scrolls go down, so content added meanwhile cannot unstick the reader. */
  onScroll() {
    const list = this.list;
    const top = list.scrollTop;
    const gap = list.scrollHeight - top - list.clientHeight;
    const was = this.stuck;
    this.stuck = top < this.lastTop ? gap < AT_END_PX : was || gap < NEAR_END_PX;
    this.lastTop = top;
    // Back at the end after reading far up: the pages loaded meanwhile can go again.
    if (this.stuck && !was && list.childElementCount > MAX_ITEMS) this.scheduleEnd();
  }
}

/** A cursor from the server: a number, else null (nothing older). */
function cursor(value) {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/** The label and text of an outcome: "failed"-red or "cancelled"-grey. */
function outcomeText(cancelled, label, message) {
  let text = typeof message === "string" ? message : "";
  if (cancelled) text = text.replace(/^cancelled\b[.:]?\s*/i, ""); // the label says it
  const gap = cancelled ? " — " : " ";
  return [el("strong", { text: label }), text ? gap : "", text ? el("span", { text }) : ""];
}

/** Append a part to a bubble; a part with an error marks the bubble. */
function addPart(bubble, part) {
  bubble.append(part);
  if (part.classList.contains("has-error")) bubble.classList.add("has-error");
  return bubble;
}

/** The agent's bubble to add an event to: the last item of `container` (skipping `working`
 * and streamed text), if it is this agent's in this invocation. */
function lastBubbleOf(container, event, working) {
  let last = container.lastElementChild;
  while (last && (last === working || last.classList.contains("streaming"))) {
    last = last.previousElementSibling;
  }
  const same =
    last &&
    last.classList.contains("msg-agent") &&
    last.dataset.author === event.author &&
    last.dataset.invocationId === (event.invocation_id || "");
  return same ? /** @type {HTMLElement} */ (last) : null;
}

/** Whether two items are stored bubbles of one agent in one invocation. */
function sameBubble(a, b) {
  const stored = (node) => node.classList.contains("msg-agent") && !node.matches(".streaming");
  return (
    stored(a) &&
    stored(b) &&
    a.dataset.author === b.dataset.author &&
    a.dataset.invocationId === b.dataset.invocationId
  );
}

/** The nodes of stored events in an item (the item itself for an operator's note). */
function eventNodes(node) {
  const inside = [...node.querySelectorAll("[data-event-id]")];
  return node.dataset.eventId ? [node, ...inside] : inside;
}

/** The seqs of an item's events; null when one has none (it could not be loaded again). */
function seqsOf(node) {
  const seqs = [];
  for (const part of eventNodes(node)) {
    const seq = Number(part.dataset.seq);
    if (part.dataset.seq === undefined || !Number.isFinite(seq)) return null;
    seqs.push(seq);
  }
  return seqs;
}
