/**
 * A run's status as the page reads it (docs/PROTOCOL.md, `run` changes).
 *
 * @module dashboard/run_status
 */

const ACTIVE = new Set(["queued", "running"]);

/**
 * Whether a run with this status may still do something (and may be cancelled).
 *
 * @param {string|null|undefined} status
 * @returns {boolean}
 */
export function isActive(status) {
  return ACTIVE.has(status ?? "");
}
