/**
 * The chat's bounded window: building a page of stored events, joining a bubble a page
 * boundary cut, and dropping whole items from either end — past {@link MAX_ITEMS} items,
 * down to {@link KEEP_ITEMS} — so that a chat of any length holds a bounded DOM (the
 * dropped come back through chat_older.js and chat_newer.js). Only items whose every
 * event has a position are dropped (a page can bring them back); messages being sent,
 * streamed or waiting their turn, and the "working" line, never are.
 *
 * @module dashboard/chat_window
 */

import { OPERATOR, USER, addPart, agentBubble, eventNodes, lastBubbleOf, renderEvent, sameBubble, seqsOf, userBubble } from "./chat_render.js";

export const MAX_ITEMS = 600; // list items past which the farthest from the reader are dropped
export const KEEP_ITEMS = 450; // ... down to this many

/** @typedef {import("./chat_render.js").StoredEvent} StoredEvent */

/**
 * Stored events (oldest first) as list items, consecutive events of one agent in one
 * invocation in one bubble; those already in `shown` are skipped, the others added to it.
 *
 * @param {StoredEvent[]} events
 * @param {Map<string, HTMLElement>} shown shown events by id
 * @param {(event: StoredEvent) => void} told each event placed
 * @returns {DocumentFragment}
 */
export function pageOf(events, shown, told) {
  const page = document.createDocumentFragment();
  for (const event of events) {
    if (!event || typeof event !== "object" || shown.has(event.id)) continue;
    const node = renderEvent(event, false);
    if (node === null) continue;
    shown.set(event.id, node);
    if (event.author === OPERATOR) page.append(node);
    else if (event.author === USER) page.append(userBubble(event, node));
    else {
      const bubble = lastBubbleOf(page, event, null);
      if (bubble) addPart(bubble, node);
      else page.append(addPart(agentBubble(event), node));
    }
    told(event);
  }
  return page;
}

/**
 * When `upper` and `lower` are one bubble cut by a page boundary, move `lower`'s parts into
 * `upper` and remove `lower`.
 *
 * @param {Element|null} upper
 * @param {Element|null} lower
 */
export function joinCut(upper, lower) {
  // The list's items: HTML elements, built by chat_render.js.
  if (!upper || !lower || !sameBubble(/** @type {HTMLElement} */ (upper), /** @type {HTMLElement} */ (lower))) return;
  upper.append(...lower.querySelectorAll(":scope > .msg-part"));
  if (lower.classList.contains("has-error")) upper.classList.add("has-error");
  lower.remove();
}

/**
 * @param {Element} node an item of the list
 * @param {Element|null} working the "working" line
 * @returns {boolean} whether an item may be dropped (a page brings it back)
 */
function droppable(node, working) {
  return node !== working && !node.matches(".streaming, .pending, .queued, .msg-older, .msg-newer");
}

/**
 * @param {HTMLElement[]} nodes
 * @param {Map<string, HTMLElement>} shown
 */
function remove(nodes, shown) {
  for (const node of nodes) {
    for (const part of eventNodes(node)) shown.delete(part.dataset.eventId || "");
    node.remove();
  }
}

/**
 * Drop the oldest items (those after `start`) down to {@link KEEP_ITEMS} items in the list.
 *
 * @param {HTMLElement} list
 * @param {Element} start the older pages' sentinel (the list's first item)
 * @param {Map<string, HTMLElement>} shown
 * @param {Element} working
 * @returns {number} the highest position dropped (-1: none)
 */
export function dropOldest(list, start, shown, working) {
  let excess = list.childElementCount - KEEP_ITEMS;
  let highest = -1;
  const dropped = [];
  for (let node = start.nextElementSibling; node && excess > 0; node = node.nextElementSibling) {
    const seqs = droppable(node, working) ? seqsOf(/** @type {HTMLElement} */ (node)) : null;
    if (seqs === null) break;
    for (const seq of seqs) highest = Math.max(highest, seq);
    dropped.push(/** @type {HTMLElement} */ (node));
    excess -= 1;
  }
  remove(dropped, shown);
  return highest;
}

/**
 * Drop the newest stored items (those before `end`, or the list's last ones) down to
 * {@link KEEP_ITEMS} items in the list.
 *
 * @param {HTMLElement} list
 * @param {Element|null} end the first item that is not a stored message (null: none)
 * @param {Map<string, HTMLElement>} shown
 * @param {Element} working
 * @returns {number|null} the lowest position dropped (null: none dropped)
 */
export function dropNewest(list, end, shown, working) {
  let excess = list.childElementCount - KEEP_ITEMS;
  let lowest = Infinity;
  const dropped = [];
  let node = end ? end.previousElementSibling : list.lastElementChild;
  for (; node && excess > 0; node = node.previousElementSibling) {
    const seqs = droppable(node, working) ? seqsOf(/** @type {HTMLElement} */ (node)) : null;
    if (seqs === null) break;
    for (const seq of seqs) lowest = Math.min(lowest, seq);
    dropped.push(/** @type {HTMLElement} */ (node));
    excess -= 1;
  }
  if (lowest === Infinity) return null; // nothing a page could bring back
  remove(dropped, shown);
  return lowest;
}

/**
 * Remove every stored item between `start` and `end` (for a jump to the latest).
 *
 * @param {Element} start
 * @param {Element|null} end
 * @param {Map<string, HTMLElement>} shown
 * @param {Element} working
 */
export function dropBetween(start, end, shown, working) {
  const dropped = [];
  for (let node = start.nextElementSibling; node && node !== end; node = node.nextElementSibling) {
    if (droppable(node, working)) dropped.push(/** @type {HTMLElement} */ (node));
  }
  remove(dropped, shown);
}

/** @param {StoredEvent[]} events @returns {number} the highest position among them (0: none) */
export function lastPosition(events) {
  let found = 0;
  for (const event of events) {
    if (typeof event?.position === "number" && event.position > found) found = event.position;
  }
  return found;
}
