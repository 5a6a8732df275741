/**
 * The Monitor kept current while it is open, for a range that ends now: when the sessions
 * list's socket says one of the reader's sessions changed (a run started, a span ended),
 * the page reads `/monitor/stats.json` again with its own parameters — cheap: the numbers
 * come from rollups — and draws it.
 *
 * @module monitor/monitor_live
 */

import { onSessionsChanged } from "../../live/js/sessions_changed.js";

/**
 * @param {object} parts
 * @param {URLSearchParams} parts.query the page's parameters (a named range: it ends now)
 * @param {HTMLElement} parts.indicator says whether the numbers are live
 * @param {(stats: any) => void} parts.onStats draws the numbers read
 */
export function keepCurrent({ query, indicator, onStats }) {
  onSessionsChanged({
    indicator,
    read: async () => {
      const response = await fetch(`/monitor/stats.json?${query}`, {
        headers: { Accept: "application/json" },
        credentials: "same-origin",
      }).catch(() => null);
      if (!response || !response.ok) return; // the next notice tries again
      const stats = await response.json().catch(() => null);
      if (stats && Array.isArray(stats.series)) onStats(stats);
    },
  });
}
