/**
 * What the chat's older and newer pages share (chat_older.js, chat_newer.js): a sentinel
 * item with a button that loads the next page, an IntersectionObserver that loads it as the
 * reader nears the sentinel, and the button's states (idle, loading, failed: a retry). The
 * list is `aria-busy` while either loads. A page that comes back after its cursor was moved
 * (the reader jumped to the latest meanwhile) is dropped: it belongs to a window that is gone.
 *
 * @module dashboard/chat_paging
 */

import { el } from "../../../core/js/dom.js";

/** Per list, the pagings loading a page now: the list is busy while any is (both share it). */
const loadingOn = new WeakMap();

export class Paging {
  /**
   * @param {object} parts
   * @param {HTMLElement} parts.list the message list (it scrolls: the observer's root)
   * @param {{idle: string, loading: string, failed: string}} parts.labels the button's
   * @param {string} parts.margin how far from the view the sentinel starts a load
   */
  constructor({ list, labels, margin }) {
    this.list = list;
    this.labels = labels;
    /** @type {"idle"|"loading"|"failed"} */
    this.state = "idle";
    /** @type {HTMLElement} the sentinel: set by the subclass */
    this.item = el("li");
    this.button = el("button", { class: "link", text: labels.idle, attrs: { type: "button" } });
    this.button.addEventListener("click", () => this.load());
    this.observer =
      typeof IntersectionObserver === "function"
        ? new IntersectionObserver((entries) => this.onSeen(entries), { root: list, rootMargin: margin })
        : null;
  }

  /** @returns {boolean} whether a page is being fetched */
  get loading() {
    return this.state === "loading";
  }

  /** Fetch and insert the next page (the subclass's). @returns {Promise<void>} */
  async load() {}

  /** (Re)start watching the sentinel: observing again reports whether it shows now. */
  watch() {
    if (!this.observer) return;
    this.observer.unobserve(this.item);
    this.observer.observe(this.item);
  }

  /**
   * @protected The sentinel came near the view: load the next page.
   * @param {IntersectionObserverEntry[]} entries
   */
  onSeen(entries) {
    if (entries.some((entry) => entry.isIntersecting) && this.state === "idle") this.load();
  }

  /** @protected @param {"idle"|"loading"|"failed"} state */
  setState(state) {
    this.state = state;
    this.button.textContent = this.labels[state];
    this.button.setAttribute("aria-disabled", String(state === "loading"));
    let loading = loadingOn.get(this.list);
    if (!loading) loadingOn.set(this.list, (loading = new Set()));
    if (state === "loading") loading.add(this);
    else loading.delete(this);
    this.list.setAttribute("aria-busy", String(loading.size > 0));
    this.shown();
  }

  /** @protected After a state change: whether the sentinel shows (the subclass's). */
  shown() {}
}
