/**
 * The chat's older pages: the cursor for the events before the oldest shown, and the list's
 * first item — a "Load older messages" button, watched by an IntersectionObserver so that the
 * page before loads as the reader nears the top. One page at a time; a failure leaves a retry
 * button.
 *
 * @module dashboard/chat_older
 */

import { el } from "../../../core/js/dom.js";
import { Paging } from "./chat_paging.js";

const OLDER_MARGIN = "800px 0px 0px 0px"; // start loading older pages this far above the view
const OLDER_LABELS = {
  idle: "Load older messages",
  loading: "Loading older messages…",
  failed: "Older messages could not be loaded — try again",
};

/** @typedef {import("./chat_render.js").StoredEvent} StoredEvent */
/** @typedef {import("./chat_render.js").EventPage} EventPage */

export class OlderPages extends Paging {
  /**
   * Prepends the sentinel item to the list (hidden until there is a cursor).
   *
   * @param {object} parts
   * @param {HTMLElement} parts.list the message list (it scrolls: the observer's root)
   * @param {((before: number) => Promise<EventPage>)|null} parts.fetch the events before a
   *   position, oldest first, and the cursor for the page before them; null: no paging
   * @param {(events: StoredEvent[]) => void} parts.insert shows a fetched page (oldest first)
   *   above everything shown
   */
  constructor({ list, fetch, insert }) {
    super({ list, labels: OLDER_LABELS, margin: OLDER_MARGIN });
    this.fetch = fetch;
    this.insert = insert;
    /** @type {number|null} the cursor for older events; null: there are none */
    this.before = null;
    this.watching = false; // the observer has been started
    /** The sentinel: the list's first item, always (pages go right after it). */
    this.item = el("li", { class: "msg-older", attrs: { hidden: true } });
    this.item.append(this.button);
    list.prepend(this.item);
  }

  /**
   * Set the cursor (the sentinel shows while there is one and a way to fetch).
   *
   * @param {unknown} value a position from the server; anything but a finite number: none
   */
  setCursor(value) {
    this.before = cursor(value);
    this.shown();
  }

  /**
   * Fetch and insert the page before the cursor. Nothing while a page loads, without a cursor
   * or without `fetch`. The cursor must move back, else paging stops (no loop). A page that
   * returns after the cursor was set anew (a jump to the latest) is dropped.
   *
   * @returns {Promise<void>}
   */
  async load() {
    if (this.state === "loading" || this.before === null || !this.fetch) return;
    const before = this.before;
    this.setState("loading");
    let page = null;
    let failed = false;
    try {
      page = await this.fetch(before);
    } catch {
      failed = true;
    }
    if (this.before !== before) {
      this.setState("idle"); // the window was read anew meanwhile: this page is not its
      this.watch();
      return;
    }
    if (failed) {
      this.setState("failed");
      return;
    }
    this.insert(Array.isArray(page?.events) ? page.events : []);
    const next = cursor(page?.before);
    this.before = next !== null && next < before ? next : null; // a cursor must move back
    this.setState("idle");
    this.watch(); // the page may not have filled the view: the sentinel may still show
  }

  /** (Re)start watching the sentinel: observing again reports whether it shows now. */
  watch() {
    this.watching = true;
    super.watch();
  }

  /** @protected */
  shown() {
    this.item.hidden = this.before === null || !this.fetch;
  }
}

/**
 * A cursor from the server: a number, else null (nothing older).
 *
 * @param {unknown} value
 * @returns {number|null}
 */
function cursor(value) {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}
