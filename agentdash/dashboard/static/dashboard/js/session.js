/**
 * The session page: wires the live socket to the chat, the timeline and (for operators) the
 * controls. Initial data comes from the page's `json_script` element `#session-data`.
 *
 * @module dashboard/session
 */

import { readJsonScript } from "../../core/js/dom.js";
import { Chat } from "./chat.js";
import { Controls } from "./controls.js";
import { LiveSocket } from "../../live/js/socket.js";
import { Timeline } from "./timeline.js";

const CONNECTION_LABELS = {
  connecting: "Connecting…",
  replaying: "Catching up…",
  live: "Live",
  reconnecting: "Reconnecting…",
  forbidden: "Not allowed",
  "not-found": "Session gone",
};
const ACTIVE_RUN = new Set(["queued", "running"]);

/** @param {string} id @returns {HTMLElement} */
const byId = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

function main() {
  const data = readJsonScript("session-data");
  const chat = new Chat({
    list: byId("messages"),
    empty: byId("chat-empty"),
    agentName: data.app_name,
  });
  const timeline = new Timeline({
    tree: byId("span-tree"),
    detail: byId("span-detail"),
    count: byId("span-count"),
    empty: byId("timeline-empty"),
  });
  const banner = byId("banner");
  const runStatus = byId("run-status");
  /** @type {Controls|null} */
  let controls = null;

  const socket = new LiveSocket(data.ws_path, {
    onChanges(items) {
      const spans = [];
      for (const item of items) {
        if (!item.data) continue; // the row is gone (e.g. a deleted run)
        if (item.kind === "event") {
          chat.applyEvent(item.data);
          controls?.applyEvent(item.data);
        } else if (item.kind === "span") {
          spans.push(item.data);
        } else if (item.kind === "state") {
          controls?.applyState(item.data);
        } else if (item.kind === "run") {
          chat.applyRun(item.data);
          timeline.applyRun(item.data);
          controls?.applyRun(item.data);
          showRun(runStatus, item.data);
        }
      }
      timeline.applySpans(spans);
    },
    onMessage(message) {
      switch (message.type) {
        case "replay.done":
          chat.scrollToEnd();
          break;
        case "partial":
          chat.applyPartial(message);
          break;
        case "chat.accepted":
          chat.accepted(message);
          break;
        case "ack":
          controls?.answer(message);
          break;
        case "error":
          if (controls?.answer(message)) break;
          if (message.ref === "chat.send" || !message.ref) chat.showError(message);
          else showBanner(banner, `${message.code}: ${message.message}`);
          break;
        default:
          break; // pong, and anything newer than this page
      }
    },
    onState(state, detail) {
      const node = byId("connection");
      node.dataset.state = state;
      let label = CONNECTION_LABELS[state] || state;
      if (state === "reconnecting" && detail?.retryInMs) {
        label = `Reconnecting in ${Math.ceil(detail.retryInMs / 1000)} s…`;
      }
      node.lastElementChild.textContent = label;
      composerReady(socket.isOpen);
      if (state === "forbidden" || state === "not-found") {
        showBanner(banner, "This session is not available to you any more. Reload the page.");
      }
    },
  });

  if (data.is_operator) {
    const root = byId("controls");
    if (root) controls = new Controls({ root, data, send: (m) => socket.send(m) });
  }
  setupComposer(socket, chat);
  socket.start();
}

/** The composer sends `chat.send`; Enter sends, Shift+Enter starts a new line. */
function setupComposer(socket, chat) {
  const form = /** @type {HTMLFormElement} */ (byId("composer"));
  const text = /** @type {HTMLTextAreaElement} */ (byId("composer-text"));
  let counter = 0;
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const value = text.value.trim();
    if (!value) return;
    const clientId = `c${Date.now().toString(36)}${(counter += 1)}`;
    if (!socket.send({ type: "chat.send", text: value, client_id: clientId })) {
      chat.showError({ code: "offline", message: "Not connected: the message was not sent." });
      return;
    }
    chat.addPending(clientId, value);
    chat.scrollToEnd();
    text.value = "";
  });
  text.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
}

/** @param {boolean} open */
function composerReady(open) {
  const button = /** @type {HTMLButtonElement} */ (byId("composer-send"));
  button.disabled = !open;
}

/** The header's badge: the latest run's status. */
function showRun(node, run) {
  node.hidden = false;
  node.textContent = ACTIVE_RUN.has(run.status) ? `run ${run.status}…` : `run ${run.status}`;
  node.dataset.status = String(run.status);
}

function showBanner(node, text) {
  node.textContent = text;
  node.hidden = false;
}

main();
