/**
 * What the chat shows before the server stores it: the user's messages being sent (by the
 * client_id echoed in `chat.accepted`) and the agents' streamed text (by invocation and
 * author). A stored event replaces its pending or streamed version; a finished run leaves no
 * streamed text behind. This module keeps the books; the chat places the nodes.
 *
 * @module dashboard/chat_unstored
 */

import { USER, hasText, pendingBubble, streamBubble } from "./chat_render.js";

/** @typedef {{node: HTMLElement, text: Text}} Stream  a streamed bubble and its one text node */

export class Unstored {
  constructor() {
    /** @type {Map<string, Stream>} by invocation|author */
    this.streams = new Map();
    /** @type {Map<string, HTMLElement>} messages being sent, by client_id */
    this.pending = new Map();
  }

  /**
   * A message being sent: its bubble (`data-client-id`), to be placed by the caller.
   *
   * @param {string} clientId
   * @param {string} text
   * @returns {HTMLElement}
   */
  send(clientId, text) {
    const node = pendingBubble(text);
    node.dataset.clientId = clientId;
    this.pending.set(clientId, node);
    return node;
  }

  /**
   * The message was stored: its bubble learns its invocation (what the stored event is
   * matched by).
   *
   * @param {string|undefined} clientId
   * @param {string|undefined} invocationId
   * @param {string|number|undefined} runId its run
   */
  accepted(clientId, invocationId, runId) {
    const node = clientId ? this.pending.get(clientId) : undefined;
    if (node && invocationId) node.dataset.invocationId = invocationId;
    if (node && runId !== undefined && runId !== null) node.dataset.runId = String(runId);
  }

  /**
   * The bubble of a message not stored yet, by its run (or the run's invocation).
   *
   * @param {string} runId
   * @param {string|undefined} invocationId
   * @returns {HTMLElement|undefined}
   */
  ofRun(runId, invocationId) {
    for (const node of this.pending.values()) {
      if (node.dataset.runId === runId) return node;
      if (invocationId && node.dataset.invocationId === invocationId) return node;
    }
    return undefined;
  }

  /** @returns {boolean} whether a message was sent and not accepted yet (its run unknown) */
  get unaccepted() {
    for (const node of this.pending.values()) if (!node.dataset.runId) return true;
    return false;
  }

  /**
   * A queued run's message, known from the run (after a reload): its bubble, to be placed
   * by the caller.
   *
   * @param {string} runId
   * @param {string} invocationId
   * @param {string} text
   * @returns {HTMLElement}
   */
  restore(runId, invocationId, text) {
    const node = this.send(`run-${runId}`, text);
    node.dataset.runId = runId;
    if (invocationId) node.dataset.invocationId = invocationId;
    return node;
  }

  /**
   * A message that will never be stored (its run was cancelled before it started): no
   * longer pending.
   *
   * @param {HTMLElement} node
   */
  forget(node) {
    for (const [clientId, found] of this.pending) {
      if (found === node) this.pending.delete(clientId);
    }
  }

  /** A request failed: the messages not accepted yet are marked `.failed`. */
  markFailed() {
    for (const node of this.pending.values()) {
      if (!node.dataset.invocationId) node.classList.add("failed");
    }
  }

  /**
   * The pending bubble a stored user event replaces (no longer pending).
   *
   * @param {import("./chat_render.js").StoredEvent} event
   * @returns {HTMLElement|undefined} undefined: none (or not the user's event)
   */
  take(event) {
    if (event.author !== USER) return undefined;
    for (const [clientId, node] of this.pending) {
      if (!node.dataset.invocationId || node.dataset.invocationId === event.invocation_id) {
        this.pending.delete(clientId);
        return node;
      }
    }
    return undefined;
  }

  /**
   * The stream of a partial's invocation and author.
   *
   * @param {{invocation_id: string, author: string}} partial
   * @returns {{stream: Stream, opened: boolean}} `opened`: new, to be placed by the caller
   */
  stream(partial) {
    const key = `${partial.invocation_id}|${partial.author}`;
    const known = this.streams.get(key);
    if (known) return { stream: known, opened: false };
    const stream = streamBubble(partial.author);
    this.streams.set(key, stream);
    return { stream, opened: true };
  }

  /**
   * A stored event with text (or the final one) ends its author's stream: removed.
   *
   * @param {import("./chat_render.js").StoredEvent} event
   */
  dropStream(event) {
    if (!hasText(event) && !event.final) return;
    const key = `${event.invocation_id}|${event.author}`;
    const stream = this.streams.get(key);
    if (stream) {
      stream.node.remove();
      this.streams.delete(key);
    }
  }

  /**
   * A finished run's streams are removed (its events are stored); all of them when the run's
   * invocation is unknown.
   *
   * @param {{invocation_id?: string}} run
   */
  dropStreams(run) {
    for (const [key, stream] of this.streams) {
      if (!run.invocation_id || key.startsWith(`${run.invocation_id}|`)) {
        stream.node.remove();
        this.streams.delete(key);
      }
    }
  }
}
