/**
 * The session page's composer: what a person writes goes to the session as `chat.send`, once
 * — waiting while the socket is not open, sent again on the next socket when the one it went
 * on closed before its answer came, and again on the same socket when no answer came for a
 * while (docs/PROTOCOL.md, "chat.send").
 *
 * @module dashboard/session/composer
 */

/**
 * @typedef {object} Composer  what the page tells the composer of its socket
 * @property {() => void} flush send the messages written while the socket was not open
 * @property {() => void} closed the socket closed: its unanswered messages go again
 * @property {(id: string|undefined) => void} answered a message (by client_id) was answered
 * @property {() => void} fail tell them they will not be sent (the session is gone)
 */

const byId = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));

/** How long a message sent waits for its answer before it goes again on the same socket (the
 * server answers one it has with its run), doubling each time up to the most. */
export const RESEND_FIRST_MS = 5000;
export const RESEND_MOST_MS = 60000;

/**
 * The timers that send a message again while it has no answer.
 *
 * @param {(message: object) => boolean} send sends on the socket (false: not open)
 * @param {(message: object) => boolean} unanswered whether it still waits for its answer
 */
export function resender(send, unanswered) {
  /** @type {Map<string, ReturnType<typeof setTimeout>>} by client_id */
  const timers = new Map();
  /** @param {{client_id: string}} message @param {number} wait */
  const arm = (message, wait = RESEND_FIRST_MS) => {
    clearTimeout(timers.get(message.client_id));
    const again = () => {
      timers.delete(message.client_id);
      // Not open: the socket's close puts it back in line for the next socket.
      if (unanswered(message) && send(message)) arm(message, Math.min(wait * 2, RESEND_MOST_MS));
    };
    timers.set(message.client_id, setTimeout(again, wait));
  };
  return {
    arm,
    /** @param {string|undefined} id */
    disarm(id) {
      if (id === undefined) return;
      clearTimeout(timers.get(id));
      timers.delete(id);
    },
    disarmAll() {
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
    },
  };
}

/** Enter sends the form, Shift+Enter starts a new line.
 * @param {HTMLTextAreaElement} text @param {HTMLFormElement} form */
function sendOnEnter(text, form) {
  text.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
}

/** The composer sends `chat.send`; Enter sends, Shift+Enter starts a new line. A message
 * written while the socket is (re)connecting is shown pending and sent, in order, the moment
 * it opens; one sent on a socket that closed before its answer came is sent again on the
 * next, with its client_id (the server answers a message it has with its run: never twice),
 * and again on the same socket while no answer comes (`resender`).
 * @param {import("../../../live/js/socket.js").LiveSocket} socket
 * @param {import("../chat/chat.js").Chat} chat
 * @returns {Composer} */
export function setupComposer(socket, chat) {
  const form = /** @type {HTMLFormElement} */ (byId("composer"));
  const text = /** @type {HTMLTextAreaElement} */ (byId("composer-text"));
  let counter = 0;
  /** @typedef {{type: string, text: string, client_id: string, req: string}} ChatSend */
  /** @type {ChatSend[]} written, not sent yet (in order) */
  let waiting = [];
  /** @type {ChatSend[]} sent, no answer yet: sent again if the socket closes first */
  let unanswered = [];
  let gone = false;
  const again = resender(socket.send.bind(socket), (m) => unanswered.includes(/** @type {ChatSend} */ (m)));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const value = text.value.trim();
    if (!value) return;
    if (gone) {
      chat.showError({ code: "offline", message: "Not connected: the message was not sent." });
      return;
    }
    const id = `c${Date.now().toString(36)}${(counter += 1)}`;
    waiting.push({ type: "chat.send", text: value, client_id: id, req: id }); // after any waiting
    flush();
    chat.addPending(id, value);
    chat.scrollToEnd();
    text.value = "";
  });
  const flush = () => {
    while (waiting.length && socket.send(waiting[0])) {
      const sent = /** @type {ChatSend} */ (waiting.shift());
      unanswered.push(sent);
      again.arm(sent);
    }
  };
  sendOnEnter(text, form);
  return {
    flush,
    /** The socket closed: what it carried without an answer goes again, first, once one is
     * open — the server may have queued it already, and then answers with that run (the
     * client_id is the same message's). */
    closed() {
      again.disarmAll();
      waiting = [...unanswered, ...waiting];
      unanswered = [];
    },
    /** A message was answered (`chat.accepted`, or an `error` for it). @param {string|undefined} id */
    answered(id) {
      again.disarm(id);
      unanswered = unanswered.filter((message) => message.client_id !== id);
    },
    fail() {
      again.disarmAll();
      gone = true;
      const unsent = waiting.length + unanswered.length;
      waiting = [];
      unanswered = [];
      if (unsent) chat.showError({ code: "offline", message: "Not connected: the message may not have been sent." });
    },
  };
}
