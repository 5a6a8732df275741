/**
 * The chat's runs: which are queued or running (the "working" line), how a failed or
 * cancelled run is told — once: by its event when one tells it (the server reports most),
 * else by a note after the run's messages — and what each run used: its tokens and cost on
 * the "working" line while it runs, then on a line of its own after its messages.
 *
 * @module dashboard/chat_runs
 */

import { el } from "../../../core/js/dom.js";
import { runNote } from "./chat_render.js";
import { isActive } from "../common/run_status.js";
import { hasUsage, usageText, usageTitle } from "../common/usage.js";

const ENDED_BADLY = new Set(["failed", "cancelled"]);
const HOLDING = new Set(["running", "waiting"]); // a session's turn (agentdash/runs/turns.py)

/**
 * @typedef {object} Run  a run as the server tells it
 * @property {string|number} id
 * @property {string} status
 * @property {string} [invocation_id]
 * @property {string} [error]
 * @property {import("../common/usage.js").Usage} [usage] its model calls' totals
 * @property {number} [attempt] how many times it started (0: never)
 * @property {boolean} [cancel_requested]
 * @property {string} [queued_text] a queued run's message, until it starts
 */

/**
 * Whether a status is a failed or cancelled run's.
 *
 * @param {string|undefined} status
 * @returns {boolean}
 */
export function endedBadly(status) {
  return ENDED_BADLY.has(status ?? "");
}

export class RunOutcomes {
  /**
   * @param {object} parts
   * @param {HTMLElement} parts.list the message list (its items carry `data-invocation-id`)
   * @param {(note: HTMLElement, after: HTMLElement|null) => void} parts.place puts a run's
   *   note in the list: right after `after`, or at the end when `after` is null
   * @param {HTMLElement} [parts.working] the "working" line (it tells the running runs' usage)
   */
  constructor({ list, place, working }) {
    this.list = list;
    this.place = place;
    this.working = working || null;
    /** @type {Map<string, HTMLElement>} an ended run's usage line, by run id */
    this.usages = new Map();
    /** @type {Map<string, Run>} runs by id, as last told */
    this.runs = new Map();
    /** @type {Set<string>} ids of the runs queued or running */
    this.active = new Set();
    /** @type {Set<string>} invocations whose outcome an event tells (an error, a cancel) */
    this.reported = new Set();
    /** @type {Map<string, HTMLElement>} a failed or cancelled run's note, by run id (shown
     * only where no event tells the outcome) */
    this.notes = new Map();
  }

  /**
   * Record a run's status.
   *
   * @param {Run} run
   * @returns {string|undefined} the status it had before (undefined: a run not seen before)
   */
  update(run) {
    const id = String(run.id);
    const before = this.runs.get(id)?.status;
    this.runs.set(id, run);
    if (isActive(run.status)) this.active.add(id);
    else this.active.delete(id);
    this.workingUsage();
    if (!isActive(run.status)) this.usage(run);
    return before;
  }

  /**
   * An ended run's tokens and cost, on a line after its messages (kept current). Nothing
   * for a run without model calls, or (until they are) without its messages shown.
   *
   * @param {Run} run
   */
  usage(run) {
    const id = String(run.id);
    const invocation = run.invocation_id || "";
    if (!hasUsage(run.usage)) return;
    const text = `run · ${usageText(run.usage)}`;
    const title = usageTitle(run.usage);
    const shown = this.usages.get(id);
    if (shown) {
      if (shown.textContent !== text) shown.textContent = text;
      shown.title = title;
      return;
    }
    const after = invocation ? this.lastOfInvocation(invocation) : null;
    if (!after) return;
    const line = el("li", {
      class: "msg msg-usage",
      text,
      attrs: { "data-run-id": id, "data-usage-invocation": invocation, title },
    });
    this.usages.set(id, line);
    this.place(line, after);
  }

  /**
   * An event of a run was shown: its usage line (once the run has ended) stays after the
   * run's last message, below a bubble the event may have started.
   *
   * @param {string|undefined} invocation
   */
  follow(invocation) {
    if (!invocation || !this.usages.size) return;
    for (const line of this.usages.values()) {
      if (line.dataset.usageInvocation !== invocation || !line.isConnected) continue;
      const after = this.lastOfInvocation(invocation);
      if (after && after.nextElementSibling !== line) this.place(line, after);
    }
  }

  /** @private The running runs' tokens and cost so far, on the "working" line. */
  workingUsage() {
    if (!this.working) return;
    let part = /** @type {HTMLElement|null} */ (this.working.querySelector(".working-usage"));
    const running = [...this.active].map((id) => this.runs.get(id)).filter((r) => hasUsage(r?.usage));
    if (running.length !== 1) {
      // None has called a model yet, or several run at once: no line to say it on.
      part?.remove();
      return;
    }
    const usage = /** @type {import("../common/usage.js").Usage} */ (running[0]?.usage);
    if (!part) {
      part = el("span", { class: "working-usage" });
      this.working.append(part);
    }
    part.textContent = usageText(usage);
    part.title = usageTitle(usage);
  }

  /**
   * Whether run `id` (queued) waits for another: one running or waiting for an approval,
   * or one queued before it.
   *
   * @param {string} id
   * @returns {boolean}
   */
  othersActive(id) {
    for (const run of this.runs.values()) {
      if (String(run.id) === id) continue;
      if (HOLDING.has(run.status)) return true;
      if (run.status === "queued" && Number(run.id) < Number(id)) return true;
    }
    return false;
  }

  /** @returns {boolean} whether a run is queued or running */
  get busy() {
    return this.active.size > 0;
  }

  /**
   * An event telling an error or a cancel tells its run's outcome: a note said for the same
   * run goes (and none is placed for it later).
   *
   * @param {import("./chat_render.js").StoredEvent} event
   */
  told(event) {
    const invocation = event.invocation_id || "";
    if (!invocation || !(event.error_code || event.error_message)) return;
    this.reported.add(invocation);
    for (const [id, note] of this.notes) {
      if (note.dataset.runInvocation === invocation) {
        note.remove();
        this.notes.delete(id);
      }
    }
  }

  /**
   * A failed or cancelled run no event tells about: a note after its messages (or at the
   * end, when it ended while the page watched). Nothing when the run has a note already, an
   * event told its outcome, or (not `live`) none of its messages is shown.
   *
   * @param {Run} run
   * @param {boolean} live the run ended while the page watched
   */
  note(run, live) {
    const id = String(run.id);
    const invocation = run.invocation_id || "";
    if (this.notes.has(id) || (invocation && this.reported.has(invocation))) return;
    const after = invocation ? this.lastOfInvocation(invocation) : null;
    if (!after && !live) return;
    const note = runNote(run, id, invocation);
    this.notes.set(id, note);
    this.place(note, after);
  }

  /** Notes and usage lines for the runs known before their messages were shown. */
  placeAll() {
    for (const run of this.runs.values()) {
      if (ENDED_BADLY.has(run.status)) this.note(run, false);
      if (!isActive(run.status)) this.usage(run);
    }
  }

  /** Forget the notes and usage lines no longer in the page (dropped with the oldest items). */
  forgetRemoved() {
    for (const [id, note] of this.notes) if (!note.isConnected) this.notes.delete(id);
    for (const [id, line] of this.usages) if (!line.isConnected) this.usages.delete(id);
  }

  /**
   * @private The last item of an invocation's messages, or null.
   * @param {string} invocation
   * @returns {HTMLElement|null}
   */
  lastOfInvocation(invocation) {
    const found = this.list.querySelectorAll(
      `:scope > [data-invocation-id="${CSS.escape(invocation)}"]`,
    );
    return found.length ? /** @type {HTMLElement} */ (found[found.length - 1]) : null;
  }
}
