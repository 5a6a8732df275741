/**
 * The live connection of one session (docs/PROTOCOL.md).
 *
 * Connects to `ws(s)://<this host>/ws/sessions/<id>/`, says `hello` with the last seq it has,
 * and reconnects with exponential backoff after a drop, keeping that seq, so the server
 * replays exactly what was missed. Changes at or below the last seq are dropped (the server
 * promises no duplicates; this keeps the promise cheap to rely on).
 *
 * @module live/socket
 */

/** Close codes after which reconnecting cannot help. */
const FINAL_CLOSE_CODES = new Map([
  [4403, "forbidden"],
  [4404, "not-found"],
  [4401, "forbidden"],
]);
const BACKOFF_FIRST_MS = 500;
const BACKOFF_MAX_MS = 15_000;
const PING_EVERY_MS = 25_000;

/**
 * @typedef {object} Change
 * @property {number} seq
 * @property {"event"|"span"|"state"|"run"|"pause"|"score"} kind
 * @property {any} data as the server sent it (JSON; its shape by `kind`, docs/PROTOCOL.md)
 */

/**
 * @typedef {"connecting"|"replaying"|"live"|"reconnecting"|"forbidden"|"not-found"} SocketState
 */

/**
 * @typedef {object} SocketHandlers
 * @property {(items: Change[], replay: boolean) => void} onChanges new changes, in seq order
 * @property {(message: any) => void} onMessage every other server message, as sent (JSON)
 *   (`replay.done`, `partial`, `spans`, `chat.accepted`, `ack`, `error`, `pong`)
 * @property {(state: SocketState, detail?: {retryInMs?: number}) => void} onState
 * @property {() => void} [onStale] the server's history is not the one this copy came from
 *   (`replay.done` below the seq asked for): start over (the page reloads its snapshot)
 */

export class LiveSocket {
  /**
   * @param {string} path the websocket path, e.g. "/ws/sessions/abc/"
   * @param {SocketHandlers} handlers
   * @param {{hello?: boolean}} [options] `hello: false` for a socket without a history (the
   *   sessions list's): it is live once open, and says nothing first
   */
  constructor(path, handlers, { hello = true } = {}) {
    this.url = `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}${path}`;
    this.handlers = handlers;
    this.hello = hello;
    /** The highest seq applied so far; sent in every `hello`. */
    this.lastSeq = 0;
    /** The seq the last `hello` asked to go on from. */
    this.helloSeq = 0;
    this.attempt = 0;
    /** @type {WebSocket|null} */
    this.ws = null;
    this.stopped = false;
    this.retryTimer = 0;
    this.pingTimer = 0;
    window.addEventListener("pagehide", () => this.stop());
  }

  /**
   * Open the connection (once; later reconnects happen by themselves).
   *
   * @param {number} [afterSeq] the seq the page's copy is complete up to (its snapshot's)
   */
  start(afterSeq = 0) {
    this.stopped = false;
    this.lastSeq = Math.max(0, Math.floor(Number(afterSeq) || 0));
    this.connect();
  }

  /** Close for good (page leaving). */
  stop() {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.pingTimer);
    if (this.ws) this.ws.close(1000);
  }

  /** @returns {boolean} whether messages can be sent now */
  get isOpen() {
    return this.ws !== null && this.ws.readyState === WebSocket.OPEN;
  }

  /**
   * Send one client message.
   *
   * @param {object} message e.g. `{type: "chat.send", text}`
   * @returns {boolean} false when not connected (nothing was sent)
   */
  send(message) {
    if (!this.isOpen) return false;
    /** @type {WebSocket} */ (this.ws).send(JSON.stringify(message)); // open: there is one
    return true;
  }

  /** @private */
  connect() {
    this.handlers.onState(this.attempt === 0 ? "connecting" : "reconnecting");
    const ws = new WebSocket(this.url);
    this.ws = ws;
    ws.addEventListener("open", () => {
      clearInterval(this.pingTimer);
      this.pingTimer = setInterval(() => this.send({ type: "ping" }), PING_EVERY_MS);
      if (!this.hello) {
        this.attempt = 0;
        this.handlers.onState("live");
        return;
      }
      this.handlers.onState("replaying");
      this.helloSeq = this.lastSeq;
      ws.send(JSON.stringify({ type: "hello", after_seq: this.lastSeq }));
    });
    ws.addEventListener("message", (event) => this.receive(event.data));
    ws.addEventListener("close", (event) => this.closed(ws, event.code));
  }

  /** @private @param {string} raw a message's text */
  receive(raw) {
    let message;
    try {
      message = JSON.parse(raw);
    } catch {
      return; // the server only sends JSON; ignore anything else
    }
    if (!message || typeof message !== "object") return;
    if (message.type === "changes") {
      /** @type {Change[]} */
      const fresh = (Array.isArray(message.items) ? message.items : []).filter(
        (/** @type {any} */ item) => item && typeof item.seq === "number" && item.seq > this.lastSeq,
      );
      fresh.sort((a, b) => a.seq - b.seq);
      if (fresh.length) {
        this.lastSeq = fresh[fresh.length - 1].seq;
        this.handlers.onChanges(fresh, Boolean(message.replay));
      }
      return;
    }
    if (message.type === "replay.done") {
      this.attempt = 0; // a full round trip: the connection is good, reset the backoff
      if (typeof message.seq === "number" && message.seq < this.helloSeq && this.handlers.onStale) {
        this.stop();
        this.handlers.onStale();
        return;
      }
      this.handlers.onState("live");
    }
    this.handlers.onMessage(message);
  }

  /** @private @param {WebSocket} ws @param {number} code */
  closed(ws, code) {
    if (ws !== this.ws) return;
    clearInterval(this.pingTimer);
    this.ws = null;
    if (this.stopped) return;
    const final = FINAL_CLOSE_CODES.get(code);
    if (final) {
      this.handlers.onState(/** @type {SocketState} */ (final));
      return;
    }
    this.attempt += 1;
    const base = Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** (this.attempt - 1));
    const delay = Math.round(base * (0.8 + Math.random() * 0.4));
    this.handlers.onState("reconnecting", { retryInMs: delay });
    this.retryTimer = setTimeout(() => this.connect(), delay);
  }
}
