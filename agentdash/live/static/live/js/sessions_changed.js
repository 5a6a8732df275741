/**
 * "One of your sessions changed": the sessions list's socket (`/ws/sessions/`), for a page
 * that then reads what it shows again over HTTP — the sessions list, the Monitor. The
 * socket names sessions at most once a second; `read` is called after each notice, never
 * twice at once (a notice that comes while it runs makes it run once more after), and
 * after a reconnect (notices sent meanwhile are lost).
 *
 * @module live/sessions_changed
 */

import { LiveSocket } from "./socket.js";

/**
 * @param {object} parts
 * @param {HTMLElement} parts.indicator says whether the page is live
 * @param {() => Promise<void>} parts.read reads what the page shows again
 */
export function onSessionsChanged({ indicator, read }) {
  let busy = false;
  let again = false;
  let connectedBefore = false;

  async function refresh() {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    try {
      do {
        again = false;
        await read();
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
        if (connectedBefore) void refresh(); // what changed while it was away
        connectedBefore = true;
      },
    },
    { hello: false },
  );
  socket.start();
}
