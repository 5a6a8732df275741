/**
 * The chat's runs: which are queued or running (the "working" line), and how a failed or
 * cancelled run is told — once: by its event when one tells it (the server reports most),
 * else by a note after the run's messages.
 *
 * @module dashboard/chat_runs
 */

import { runNote } from "./chat_render.js";
import { isActive } from "./run_status.js";

const ENDED_BADLY = new Set(["failed", "cancelled"]);

/**
 * @typedef {object} Run  a run as the server tells it
 * @property {string|number} id
 * @property {string} status
 * @property {string} [invocation_id]
 * @property {string} [error]
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
   */
  constructor({ list, place }) {
    this.list = list;
    this.place = place;
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
    return before;
  }

  /** @returns {boolean} whether a run is queued or running */
  get busy() {
    return this.active.size > 0;
  }

  /**
   * An event telling an error or a cancel tells its run's outcome: a note said for the same
   * run goes (and none is placed for it later).
   *
   * @param {import("./chat.js").StoredEvent} event
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

  /** Notes for the runs known before their messages were shown. */
  placeAll() {
    for (const run of this.runs.values()) {
      if (ENDED_BADLY.has(run.status)) this.note(run, false);
    }
  }

  /** Forget the notes no longer in the page (dropped with the oldest items). */
  forgetRemoved() {
    for (const [id, note] of this.notes) if (!note.isConnected) this.notes.delete(id);
  }

  /** @private The last item of an invocation's messages, or null. */
  lastOfInvocation(invocation) {
    const found = this.list.querySelectorAll(
      `:scope > [data-invocation-id="${CSS.escape(invocation)}"]`,
    );
    return found.length ? /** @type {HTMLElement} */ (found[found.length - 1]) : null;
  }
}
