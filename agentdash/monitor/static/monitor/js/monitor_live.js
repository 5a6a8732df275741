/**
 * The Monitor kept current while it is open, for a range that ends now: the sessions list's
 * socket (`/ws/sessions/`) says when any of the reader's sessions changed (a run started,
 * a span ended), at most once a second; the page then reads `/monitor/stats.json` again
 * with its own parameters — cheap: the numbers come from rollups — and draws it. After a
 * reconnect it reads them again (what changed meanwhile).
 *
 * @module monitor/monitor_live
 */

import { LiveSocket } from "../../live/js/socket.js";

/**
 * @param {object} parts
 * @param {URLSearchParams} parts.query the page's parameters (a named range: it ends now)
 * @param {HTMLElement} parts.indicator says whether the numbers are live
 * @param {(stats: any) => void} parts.onStats draws the numbers read
 */
export function keepCurrent({ query, indicator, onStats }) {
  let busy = false;
  let again = false;
  let connectedBefore = false;

  async function readAgain() {
    const response = await fetch(`/monitor/stats.json?${query}`, {
      headers: { Accept: "application/json" },
      credentials: "same-origin",
    }).catch(() => null);
    if (!response || !response.ok) return; // the next notice tries again
    const stats = await response.json().catch(() => null);
    if (stats && Array.isArray(stats.series)) onStats(stats);
  }

  async function refresh() {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    try {
      do {
        again = false;
        await readAgain();
      } while (again);
    } finally {
      busy = false;
    }
  }

  const socket = new LiveSocket(
    "/ws/sessions/",
    {
      onChanges: () => {},
      onMessage: (message) => {
        if (message.type === "sessions.changed") void refresh();
      },
      onState: (state) => {
        indicator.dataset.state = state;
        indicator.textContent = state === "live" ? "Live" : state === "forbidden" ? "Not live" : "Connecting…";
        if (state !== "live") return;
        if (connectedBefore) void refresh();
        connectedBefore = true;
      },
    },
    { hello: false },
  );
  socket.start();
}
