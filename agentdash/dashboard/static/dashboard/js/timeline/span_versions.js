/**
 * The newest full data of recently seen spans (live versions and fetched copies), least
 * recent first, a few hundred at most. Kept from the page's start by span_detail_lazy.js and
 * read by the details pane (span_detail.js) once it is loaded.
 *
 * @module dashboard/span_versions
 */

import { spanKey } from "./span_tree.js";

const KEEP = 200;

export class SpanVersions {
  constructor() {
    /** @type {Map<string, {data: any, seq: number, fetched: boolean}>} span key → full data;
     * fetched: read from the server (live versions lack its extras) */
    this.kept = new Map();
  }

  /**
   * Keep a span's full data if it is at least as new as the one kept.
   *
   * @param {any} data
   * @param {number} seq
   * @param {boolean} [fetched] read from the server (not a live version)
   * @returns {string|null} the span's key when kept, null when older than what is kept
   */
  keep(data, seq, fetched = false) {
    const key = spanKey(String(data.trace_id), String(data.span_id));
    const had = this.kept.get(key);
    if (had && (had.seq > seq || (ended(had.data) && !ended(data)))) {
      return null; // older, or open after its end (an ended span is final)
    }
    this.kept.delete(key);
    this.kept.set(key, { data, seq, fetched });
    if (this.kept.size > KEEP) this.kept.delete(/** @type {string} */ (this.kept.keys().next().value)); // the least recent
    return key;
  }

  /** @param {string} key @returns {{data: any, seq: number, fetched: boolean}|undefined} */
  get(key) {
    return this.kept.get(key);
  }

  /** @param {string} key */
  has(key) {
    return this.kept.has(key);
  }
}

/** @param {any} data a span's data @returns {boolean} whether it has an end */
function ended(data) {
  return data.end_time !== null && data.end_time !== undefined;
}
