/**
 * Messages waiting their turn. A session's runs take turns (the server queues a message
 * sent while the agent works): the message of a run that has not started stays at the end
 * of the chat, under the "working" line, marked "queued" while another run is under way;
 * once its run starts it joins the conversation, and a run cancelled before it started
 * leaves its message "withdrawn". After a reload the message comes from the run
 * (`queued_text`). The chat places everything else above this tail (`tailStart`).
 *
 * @module dashboard/chat_queue
 */

import { el } from "../../../core/js/dom.js";

export class ChatQueue {
  /**
   * @param {object} parts
   * @param {HTMLElement} parts.list the message list
   * @param {HTMLElement} parts.empty shown while there is nothing to show
   * @param {import("./chat_unstored.js").Unstored} parts.unstored messages not stored yet
   * @param {import("./chat_runs.js").RunOutcomes} parts.outcomes the runs as last told
   * @param {HTMLElement} parts.working the "working" line
   * @param {((runId: string) => boolean)|null} parts.cancel asks to cancel a run (null: not
   *   this reader's to cancel)
   */
  constructor({ list, empty, unstored, outcomes, working, cancel }) {
    this.list = list;
    this.empty = empty;
    this.unstored = unstored;
    this.outcomes = outcomes;
    this.working = working;
    this.cancel = cancel;
  }

  /**
   * A run's message, as the run now stands: placed and marked while it waits, joined to
   * the conversation once the run starts, "withdrawn" if it was cancelled first.
   *
   * @param {import("./chat_runs.js").Run} run
   */
  apply(run) {
    const id = String(run.id);
    let node = this.unstored.ofRun(id, run.invocation_id);
    const text = typeof run.queued_text === "string" ? run.queued_text : "";
    if (run.status === "queued" && text) {
      if (!node) {
        if (this.unstored.unaccepted) return; // ours, maybe: its acceptance places it
        node = this.unstored.restore(id, run.invocation_id || "", text);
        this.list.append(node);
        this.empty.hidden = true;
      }
      const behind = this.outcomes.othersActive(id);
      markQueued(node, behind, this.cancel && (() => this.cancel?.(id)));
      if (behind && this.working.isConnected) this.keepWorkingLast();
      return;
    }
    if (!node) return;
    if (run.status === "cancelled" && !run.attempt) {
      this.unstored.forget(node);
      markWithdrawn(node);
    } else if (node.classList.contains("queued")) {
      markQueued(node, false, null);
      this.list.insertBefore(node, this.tailStart()); // under way: in the conversation now
    }
    this.keepWorkingLast();
  }

  /** Every queued run's message: marked while another run is under way. */
  all() {
    for (const run of this.outcomes.runs.values()) {
      if (run.status === "queued") this.apply(run);
    }
  }

  /** The "working" line's Stop: cancel the runs under way (not the queued ones). */
  stop() {
    for (const run of this.outcomes.runs.values()) {
      if (run.status === "running" && !run.cancel_requested) this.cancel?.(String(run.id));
    }
  }

  /** The "working" line right above the queued messages (or last, with none). */
  keepWorkingLast() {
    if (!this.working.isConnected) return;
    const queued = this.list.querySelector(":scope > .msg-user.queued");
    if (queued) {
      if (this.working.nextElementSibling !== queued) queued.before(this.working);
    } else if (this.list.lastElementChild !== this.working) {
      this.list.append(this.working);
    }
  }

  /** @returns {Element|null} where new items go: above the "working" line and the queue */
  tailStart() {
    if (this.working.isConnected) return this.working;
    return this.list.querySelector(":scope > .msg-user.queued");
  }
}

/**
 * Mark a message bubble as waiting its turn (`queued`): a line under it says so and, when
 * `withdraw` is given, offers to cancel its run. Unmarked (`queued` false): the line goes.
 *
 * @param {HTMLElement} node a pending bubble
 * @param {boolean} queued
 * @param {(() => void)|null} withdraw
 */
function markQueued(node, queued, withdraw) {
  node.classList.toggle("queued", queued);
  let line = node.querySelector(":scope > .msg-queue");
  if (!queued) {
    line?.remove();
    return;
  }
  if (line) return;
  line = el("div", {
    class: "msg-queue",
    children: [el("span", { text: "Queued: answered once the run before it has ended." })],
  });
  if (withdraw) {
    const button = el("button", {
      class: "link small",
      text: "Withdraw",
      attrs: { type: "button", title: "Cancel this message's run before it starts" },
    });
    button.addEventListener("click", () => {
      button.disabled = true;
      withdraw();
    });
    line.append(" ", button);
  }
  node.append(line);
}

/**
 * Mark a message whose run was cancelled before it started: it was never answered.
 *
 * @param {HTMLElement} node a pending bubble
 */
function markWithdrawn(node) {
  markQueued(node, false, null);
  node.classList.remove("pending");
  node.classList.add("withdrawn");
  node.append(el("div", { class: "msg-queue", text: "Withdrawn: cancelled before it ran." }));
}
