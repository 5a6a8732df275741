/**
 * The chat's newer pages, for a reader who read far back: the chat keeps a bounded window of
 * messages (chat_window.js), so reading back drops the newest, and they come back here —
 * the cursor for the events after the newest shown, and an item after it: "Load newer
 * messages" (watched by an IntersectionObserver, so the page after loads as the reader nears
 * the bottom) and "Jump to the latest" — that one also in a bar below the list, which stays
 * put while the pages load. While the window is cut, live events are not shown (the pages
 * bring them). One page at a time; a failure leaves a retry button.
 *
 * @module dashboard/chat_newer
 */

import { el } from "../../../core/js/dom.js";
import { Paging } from "./chat_paging.js";

const NEWER_MARGIN = "0px 0px 800px 0px"; // start loading newer pages this far below the view
const NEWER_LABELS = {
  idle: "Load newer messages",
  loading: "Loading newer messages…",
  failed: "Newer messages could not be loaded — try again",
};

/** @typedef {import("./chat_render.js").StoredEvent} StoredEvent */
/** @typedef {{events: StoredEvent[], after: number|null}} NewerPage */

export class NewerPages extends Paging {
  /**
   * @param {object} parts
   * @param {HTMLElement} parts.list the message list (it scrolls: the observer's root)
   * @param {((after: number) => Promise<NewerPage>)|null} parts.fetch the events after a
   *   position, oldest first, and the position to ask the next page with (null: the latest)
   * @param {(events: StoredEvent[], last: boolean, after: number) => void} parts.insert shows
   *   a fetched page (oldest first) below everything stored shown; `last`: it reaches the
   *   latest; `after`: the position it was asked after
   * @param {() => void} parts.jump show the latest messages again (the button)
   */
  constructor({ list, fetch, insert, jump }) {
    super({ list, labels: NEWER_LABELS, margin: NEWER_MARGIN });
    this.fetch = fetch;
    this.insert = insert;
    /** @type {number|null} the position after which nothing is shown; null: not cut */
    this.after = null;
    const jumpButton = () => {
      const button = el("button", { class: "link", text: "Jump to the latest", attrs: { type: "button" } });
      button.addEventListener("click", () => jump());
      return button;
    };
    /** The sentinel: right after the newest stored item shown, while the window is cut. */
    this.item = el("li", { class: "msg-newer", children: [this.button, " · ", jumpButton()] });
    // Coming near the sentinel loads the next page above it, which moves it down: the jump
    // also waits in a bar right below the list (not in it), which holds still meanwhile.
    this.bar = el("div", {
      class: "chat-jump",
      attrs: { hidden: true, role: "status" },
      children: ["Reading earlier messages · ", jumpButton()],
    });
    if (typeof list.after === "function") list.after(this.bar);
  }

  /** @returns {boolean} whether the newest messages are left out */
  get cut() {
    return this.after !== null;
  }

  /**
   * Leave out everything after `position`; the sentinel goes before `where` (the first
   * thing that is not a stored message: the queue's tail, or nothing).
   *
   * @param {number} position
   * @param {Node|null} where
   */
  cutAfter(position, where) {
    this.after = position;
    this.bar.hidden = false;
    if (!this.item.isConnected) this.list.insertBefore(this.item, where);
    this.watch();
  }

  /** Nothing is left out any more: the sentinel goes. */
  reset() {
    this.after = null;
    this.bar.hidden = true;
    this.observer?.unobserve(this.item);
    this.item.remove();
  }

  /**
   * Fetch and insert the page after the cursor. Nothing while a page loads, when not cut,
   * or without `fetch`. The cursor must move on, else the window is taken as reaching the
   * latest (no loop). A page that returns after the cursor moved (a jump to the latest reset
   * the window meanwhile) is dropped: inserting it would re-cut the new window.
   *
   * @returns {Promise<void>}
   */
  async load() {
    if (this.state === "loading" || this.after === null || !this.fetch) return;
    const after = this.after;
    this.setState("loading");
    let page = null;
    let failed = false;
    try {
      page = await this.fetch(after);
    } catch {
      failed = true;
    }
    if (this.after !== after) {
      // Jumped to the latest meanwhile: this page is not the new window's. A cut made since
      // (the jump's catch-up, whose load found this one running) loads its own page now.
      this.setState("idle");
      if (this.cut) void this.load();
      return;
    }
    if (failed) {
      this.setState("failed");
      return;
    }
    const next = typeof page?.after === "number" && page.after > after ? page.after : null;
    if (next === null) this.reset();
    else this.after = next;
    this.insert(Array.isArray(page?.events) ? page.events : [], next === null, after);
    this.setState("idle");
    if (next !== null) this.watch(); // the page may not have filled the view
  }
}
