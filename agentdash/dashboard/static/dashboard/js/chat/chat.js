/**
 * The chat: the user's and the agents' messages, tool calls and results, errors.
 *
 * Stored agent and user text arrives as `html`, rendered and sanitized by the server, and is
 * inserted ONLY through `setSanitizedHtml` (in chat_render.js, which builds every item).
 * Everything else — streamed partial text, the text being sent, tool arguments and results,
 * error messages — goes through `textContent`.
 *
 * Paged: the page hands over the latest events ({@link Chat#loadLatest}) and a cursor; older
 * pages come from `fetchOlder` when the reader nears the top of the list (chat_older.js: an
 * IntersectionObserver on the first item, which is also a "Load older messages" button).
 * Layout is never read per event: whether the reader is at the bottom is tracked from scroll
 * events, and after appends the list scrolls to its end at most once per animation frame. A
 * page inserted above keeps the reader's place (the list's height is measured once before and
 * once after the page). The list is a bounded window (chat_window.js): past `MAX_ITEMS`
 * items the ones farthest from the reader go — the oldest while the reader is at the end,
 * the newest while they read back — and come back as pages, older through chat_older.js,
 * newer through chat_newer.js (live events wait there while the newest are left out).
 * How runs end is told by chat_runs.js; messages being sent and streamed text are kept by
 * chat_unstored.js until their stored events replace them; messages waiting their turn
 * stay at the end (chat_queue.js).
 *
 * @module dashboard/chat
 */

import { NewerPages } from "./chat_newer.js";
import { OlderPages } from "./chat_older.js";
import { ChatQueue } from "./chat_queue.js";
import { OPERATOR, USER, addPart, agentBubble, errorItem, lastBubbleOf, renderEvent, userBubble, workingItem } from "./chat_render.js";
import { MAX_ITEMS, dropBetween, dropNewest, dropOldest, joinCut, lastPosition, pageOf } from "./chat_window.js";
import { RunOutcomes, endedBadly } from "./chat_runs.js";
import { Unstored } from "./chat_unstored.js";
import { isActive } from "../common/run_status.js";

const NEAR_END_PX = 80; // scrolling down to within this of the end sticks to the end again
const AT_END_PX = 4; // scrolling up unsticks unless the list is (still) at its very end

/** @typedef {import("./chat_render.js").StoredEvent} StoredEvent */
/** @typedef {import("./chat_render.js").EventPage} EventPage */

export class Chat {
  /**
   * @param {object} parts
   * @param {HTMLOListElement} parts.list the message list (it scrolls)
   * @param {HTMLElement} parts.empty shown while there is nothing to show
   * @param {string} parts.agentName the session's agent (for the "working" line)
   * @param {(before: number|null) => Promise<EventPage>} [parts.fetchOlder] the events before
   *   a position (null: the latest), oldest first, and the cursor for the page before them
   * @param {(after: number) => Promise<import("./chat_newer.js").NewerPage>} [parts.fetchNewer]
   *   the events after a position, oldest first, and the cursor for the page after them
   * @param {(runId: string) => boolean} [parts.cancel] asks to cancel a run (false: not
   *   sent); given to those who may (the owner, operators): the "working" line gets a Stop
   *   button and a queued message a Withdraw one
   */
  constructor({ list, empty, agentName, fetchOlder, fetchNewer, cancel }) {
    this.list = list;
    this.empty = empty;
    this.agentName = agentName;
    /** @type {Map<string, HTMLElement>} shown events by id (a bubble's part, or a note) */
    this.events = new Map();
    this.unstored = new Unstored();
    this.stuck = true; // the reader is at the end: new messages scroll into view
    this.lastTop = 0;
    this.frame = 0;

    this.cancel = typeof cancel === "function" ? cancel : null;
    this.working = workingItem(agentName, this.cancel && (() => this.queue.stop()));
    this.outcomes = new RunOutcomes({
      list,
      place: (note, after) => this.placeNote(note, after),
      working: this.working,
    });
    this.queue = new ChatQueue({
      list,
      empty,
      unstored: this.unstored,
      outcomes: this.outcomes,
      working: this.working,
      cancel: this.cancel,
    });
    this.older = new OlderPages({
      list,
      fetch: typeof fetchOlder === "function" ? fetchOlder : null,
      insert: (events) => {
        this.insertPage(events);
        this.outcomes.placeAll();
      },
    });
    this.fetchLatest = typeof fetchOlder === "function" ? () => fetchOlder(null) : null;
    this.newer = new NewerPages({
      list,
      fetch: typeof fetchNewer === "function" ? fetchNewer : null,
      insert: (events, last, after) => this.appendPage(events, last, after),
      jump: () => void this.jumpToLatest(),
    });
    this.skipped = 0; // the highest position of a live event left out while the window is cut
    this.jumping = false;

    list.addEventListener("scroll", () => this.onScroll(), { passive: true });
    // Shown again (a tab on a phone) or resized: keep the end in view. Called after layout.
    if (typeof ResizeObserver === "function") {
      new ResizeObserver(() => {
        if (this.stuck && list.clientHeight > 0) this.toEnd();
      }).observe(list);
    }
  }

  /**
   * The latest stored events, oldest first (the snapshot's), and the cursor for older ones.
   * Events already shown are skipped; the list scrolls to its end.
   *
   * @param {StoredEvent[]} events
   * @param {number|null} before pass to `fetchOlder` for the page before these; null: none
   */
  loadLatest(events, before) {
    this.insertPage(Array.isArray(events) ? events : []);
    this.older.setCursor(before);
    this.outcomes.placeAll();
    this.scrollToEnd();
  }

  /**
   * Show the user's message at once, before the server stores it.
   *
   * @param {string} clientId echoed back in `chat.accepted`
   * @param {string} text
   */
  addPending(clientId, text) {
    if (this.newer.cut) void this.jumpToLatest(); // a message is sent from the latest
    this.list.append(this.unstored.send(clientId, text)); // last: it may have to wait its turn
    this.empty.hidden = true;
    this.scheduleEnd();
  }

  /**
   * `chat.accepted`: the message was stored and a run queued.
   *
   * @param {{client_id?: string, invocation_id?: string, run_id?: string}} message
   */
  accepted(message) {
    this.unstored.accepted(message.client_id, message.invocation_id, message.run_id);
    this.queue.all();
  }

  /**
   * A request of ours failed (an `error` message for `chat.send`, or one without a `ref`).
   *
   * @param {{code?: string, message?: string}} error
   */
  showError(error) {
    this.unstored.markFailed();
    this.append(errorItem(error));
  }

  /**
   * `partial`: streamed model text, shown as plain text until the stored event replaces it.
   * Each chunk is appended to one text node: nothing else is redrawn.
   *
   * @param {{invocation_id: string, author: string, text: string}} partial
   */
  applyPartial(partial) {
    const { stream, opened } = this.unstored.stream(partial);
    if (opened) this.append(stream.node);
    stream.text.appendData(typeof partial.text === "string" ? partial.text : "");
    this.queue.keepWorkingLast();
    this.scheduleEnd();
  }

  /**
   * A stored event (live): a message, tool calls and results, an error. Consecutive events of
   * one agent in one invocation share a bubble. A stored event replaces its pending or
   * streamed version; an event seen before (by id) is redrawn in place.
   *
   * @param {StoredEvent} event
   */
  applyEvent(event) {
    this.unstored.dropStream(event);
    if (this.newer.cut && !this.events.has(event.id)) {
      // The newest are left out (the reader reads far back): the pages after bring it.
      this.skipped = Math.max(this.skipped, lastPosition([event]));
      this.outcomes.follow(event.invocation_id);
      this.outcomes.told(event);
      return;
    }
    const node = renderEvent(event, true);
    if (node === null) return;
    this.showEvent(event, node);
    this.outcomes.follow(event.invocation_id);
    this.outcomes.told(event);
  }

  /** @private {@link Chat#applyEvent}'s placing of a rendered event. */
  showEvent(/** @type {StoredEvent} */ event, /** @type {HTMLElement} */ node) {
    const seen = this.events.get(event.id);
    this.events.set(event.id, node);
    if (seen) {
      if (seen.dataset.seq !== undefined) node.dataset.seq ??= seen.dataset.seq;
      seen.replaceWith(node);
    } else if (event.author === OPERATOR) {
      this.append(node);
    } else if (event.author === USER) {
      const bubble = userBubble(event, node);
      const pending = this.unstored.take(event);
      if (pending) pending.replaceWith(bubble);
      else this.append(bubble);
    } else {
      const bubble = lastBubbleOf(this.list, event, this.working);
      if (bubble) {
        addPart(bubble, node);
        this.queue.keepWorkingLast();
        this.scheduleEnd();
      } else {
        this.append(addPart(agentBubble(event), node));
      }
    }
  }

  /**
   * A run's status: the "working" line while one is queued or running. A failed or cancelled
   * run is told once: by its event when one tells it (the server reports most), else by a
   * note after the run's messages.
   *
   * @param {import("./chat_runs.js").Run} run
   */
  applyRun(run) {
    const before = this.outcomes.update(run);
    if (this.outcomes.busy) this.append(this.working);
    else this.working.remove();
    if (endedBadly(run.status) && before !== run.status) {
      this.outcomes.note(run, isActive(before));
    }
    if (!isActive(run.status)) this.unstored.dropStreams(run);
    this.queue.apply(run);
    this.queue.all();
  }

  /** Scroll to the newest message (in the next frame) and stay there as messages come. */
  scrollToEnd() {
    if (this.newer.cut) {
      void this.jumpToLatest();
      return;
    }
    this.stuck = true;
    this.scheduleEnd();
  }

  /**
   * Show the latest messages again, after reading far back (the newest were left out): the
   * window is read anew from the latest page, and live events left out meanwhile follow.
   *
   * @returns {Promise<void>}
   */
  async jumpToLatest() {
    if (!this.fetchLatest || this.jumping) return;
    this.jumping = true;
    try {
      const page = await this.fetchLatest();
      const events = Array.isArray(page?.events) ? page.events : [];
      dropBetween(this.older.item, this.newer.item.isConnected ? this.newer.item : this.queue.tailStart(), this.events, this.working);
      this.outcomes.forgetRemoved();
      this.newer.reset();
      this.stuck = true;
      this.insertPage(events);
      this.older.setCursor(page?.before);
      this.outcomes.placeAll();
      const shown = lastPosition(events);
      if (this.skipped > shown) this.catchUp(shown);
      this.skipped = 0;
      this.scheduleEnd();
    } catch {
      // the server away: the "Jump to the latest" button stays
    } finally {
      this.jumping = false;
    }
  }

  // ── pages ──────────────────────────────────────────────────────────────────────────────

  /** @private Insert stored events (oldest first) above everything shown, keeping the
   * reader's place; a bubble cut by the page boundary is joined again. */
  insertPage(/** @type {StoredEvent[]} */ events) {
    const page = pageOf(events, this.events, (event) => this.outcomes.told(event));
    if (!page.childElementCount) return;
    joinCut(page.lastElementChild, this.older.item.nextElementSibling);
    const list = this.list;
    const height = this.stuck ? 0 : list.scrollHeight;
    this.older.item.after(page);
    this.empty.hidden = true;
    if (this.stuck) {
      this.scheduleEnd();
    } else {
      list.scrollTop += list.scrollHeight - height;
      this.lastTop = list.scrollTop;
      this.trimNewest(); // below the reader: their place does not move
    }
  }

  /** @private Append a page of newer events (oldest first) below the newest stored item
   * shown; `last`: it reaches the latest (`after`: the position it was asked after). */
  appendPage(/** @type {StoredEvent[]} */ events, /** @type {boolean} */ last, /** @type {number} */ after) {
    for (const event of events) if (event?.author === USER) this.unstored.take(event)?.remove();
    const page = pageOf(events, this.events, (event) => this.outcomes.told(event));
    const end = this.newer.item.isConnected ? this.newer.item : this.queue.tailStart();
    const above = end ? end.previousElementSibling : this.list.lastElementChild;
    joinCut(above, page.firstElementChild);
    this.list.insertBefore(page, end);
    this.outcomes.placeAll();
    this.trimOldest(true);
    const shown = Math.max(after, lastPosition(events));
    if (last && this.skipped > shown) this.catchUp(shown);
    else if (last) this.skipped = 0;
  }

  /** @private Live events were left out past `shown`: fetch them as a page. */
  catchUp(/** @type {number} */ shown) {
    this.newer.cutAfter(shown, this.queue.tailStart());
    void this.newer.load();
  }

  /** @private Over MAX_ITEMS items: drop the oldest (the reader at the end, or reading
   * down again: `keepPlace` then holds the reader's place). */
  trimOldest(/** @type {boolean} */ keepPlace) {
    const list = this.list;
    if (this.older.loading || list.childElementCount <= MAX_ITEMS) return;
    const height = list.scrollHeight;
    const highest = dropOldest(list, this.older.item, this.events, this.working);
    this.outcomes.forgetRemoved();
    if (highest >= 0) this.older.setCursor(highest + 1); // every older event is behind it
    if (keepPlace) {
      list.scrollTop -= height - list.scrollHeight;
      this.lastTop = list.scrollTop;
    }
  }

  /** @private Over MAX_ITEMS items, the reader reading back: drop the newest. */
  trimNewest() {
    if (this.newer.loading || this.list.childElementCount <= MAX_ITEMS) return;
    const end = this.newer.item.isConnected ? this.newer.item : this.queue.tailStart();
    const lowest = dropNewest(this.list, end, this.events, this.working);
    if (lowest === null) return;
    this.outcomes.forgetRemoved();
    this.newer.cutAfter(lowest - 1, this.queue.tailStart());
  }

  // ── the end of the list ────────────────────────────────────────────────────────────────

  /** @private Add at the end; the view follows in the next frame if the reader is there. */
  append(/** @type {Element} */ node) {
    this.list.insertBefore(node, this.queue.tailStart());
    this.queue.keepWorkingLast();
    this.empty.hidden = true;
    this.scheduleEnd();
  }

  /** @private A run's note: right after its messages, or at the end. */
  placeNote(/** @type {Element} */ note, /** @type {Element|null} */ after) {
    if (after) {
      after.after(note);
      this.queue.keepWorkingLast();
      this.scheduleEnd();
    } else if (!this.newer.cut) {
      this.append(note); // (while the newest are left out, its run's messages come later)
    }
  }

  /** @private At most one scroll (one layout) per frame, however many appends. */
  scheduleEnd() {
    if (this.frame || !this.stuck) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      if (!this.stuck) return;
      this.trimOldest(false);
      this.toEnd();
      if (!this.older.watching) this.older.watch();
    });
  }

  /** @private */
  toEnd() {
    const list = this.list;
    list.scrollTop = list.scrollHeight;
    this.lastTop = list.scrollTop;
  }

  /** @private Scrolling up leaves the end; scrolling down to near it sticks again. Our own
   * scrolls go down, so content added meanwhile cannot unstick the reader. */
  onScroll() {
    const list = this.list;
    const top = list.scrollTop;
    const gap = list.scrollHeight - top - list.clientHeight;
    const was = this.stuck;
    this.stuck = !this.newer.cut && (top < this.lastTop ? gap < AT_END_PX : was || gap < NEAR_END_PX);
    this.lastTop = top;
    // Back at the end after reading far up: the pages loaded meanwhile can go again.
    if (this.stuck && !was && list.childElementCount > MAX_ITEMS) this.scheduleEnd();
  }
}
