/**
 * A run's status as the page reads it (docs/PROTOCOL.md, `run` changes).
 *
 * @module dashboard/run_status
 */

const ACTIVE = new Set(["queued", "running"]);
const CANCELLABLE = new Set(["queued", "running", "waiting"]);

/**
 * Whether a run with this status may be cancelled: an active one, or one waiting for an
 * approval (cancelling it is the way out other than deny).
 *
 * @param {string|null|undefined} status
 * @returns {boolean}
 */
export function mayCancel(status) {
  return CANCELLABLE.has(status ?? "");
}

/**
 * Whether a run with this status may still do something.
 *
 * @param {string|null|undefined} status
 * @returns {boolean}
 */
export function isActive(status) {
  return ACTIVE.has(status ?? "");
}
