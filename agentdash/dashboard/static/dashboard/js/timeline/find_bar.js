/**
 * The timeline's filter bar (`#span-find` in session.html): text, kind, status, callback
 * outcome and a minimum duration narrow the tree to the matching spans and their ancestors,
 * matches marked (span_find.js does the matching). Enter / Shift+Enter in the text box and
 * the ↓ ↑ buttons go to the next / previous match, "Next error" to the next failed span —
 * each opens the span's details, expanding and scrolling the tree to it.
 *
 * Text is matched at once against what the page holds (names, ids, hooks, status messages);
 * when typing pauses, the server is asked which spans hold it in their attributes or events
 * (`spans/search/`), and those join the matches. While spans keep arriving, the filter is
 * applied again at most a few times a second and the server asked again now and then.
 *
 * @module dashboard/find_bar
 */

import { formatCount, nowNs } from "../common/format.js";
import { SpanFind, emptyFilter } from "./span_find.js";

const TYPE_PAUSE_MS = 120;
const SERVER_PAUSE_MS = 300;
const LIVE_APPLY_MS = 250;
const LIVE_SEARCH_MS = 3_000;
const NOTE_MS = 4_000;

/** @param {number} ms Unix ms @returns {string} the reader's local hour and minute */
function clock(ms) {
  return new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

/** @typedef {import("./span_tree.js").SpanNode} SpanNode */

export class FindBar {
  /**
   * @param {object} options
   * @param {HTMLFormElement} options.form
   * @param {import("./timeline.js").Timeline} options.timeline
   * @param {(text: string, signal: AbortSignal) => Promise<{keys: [string, string][], truncated: boolean, limit?: number, notice?: string|null}>} options.search
   */
  constructor({ form, timeline, search }) {
    this.form = form;
    this.timeline = timeline;
    this.search = search;
    this.find = new SpanFind(timeline.data);
    const field = (/** @type {string} */ id) => /** @type {HTMLInputElement} */ (form.querySelector(`#${id}`));
    this.text = field("find-text");
    this.kind = field("find-kind");
    this.status = field("find-status");
    this.outcome = field("find-outcome");
    this.min = field("find-min");
    this.count = /** @type {HTMLElement} */ (form.querySelector("#find-count"));
    /** the window a drill-down's spans started in (Unix ns; 0: none), until cleared */
    this.window = { from: 0, to: 0 };
    this.windowNote = /** @type {HTMLElement} */ (form.querySelector("#find-window"));
    /** @type {AbortController|null} */
    this.asking = null;
    this.serverState = ""; // "", "searching", "failed", "truncated"
    this.serverNotice = ""; // the server's words when it stopped at its limit
    this.serverLimit = 0; // how many matches it stops at
    this.note = "";
    this.timers = { type: 0, server: 0, live: 0, liveSearch: 0, note: 0 };
    this.wire();
    timeline.on("data", () => this.dataChanged());
    timeline.on("select", () => this.drawCount());
  }

  /**
   * Set the bar from a link's query (`find_kind`, `find_status`, `find_text`, and the window
   * `find_from`–`find_to` their start falls in: the Monitor's drill-down says which steps it
   * came for); a value the bar does not offer is ignored.
   *
   * @param {URLSearchParams} query
   * @returns {boolean} whether it asked for anything
   */
  fromQuery(query) {
    const [from, to] = ["find_from", "find_to"].map((name) => Date.parse(query.get(name) || ""));
    let given = false;
    if (Number.isFinite(from) && Number.isFinite(to) && from < to) {
      this.window = { from: from * 1e6, to: to * 1e6 };
      this.windowNote.hidden = false;
      const text = /** @type {HTMLElement} */ (this.windowNote.querySelector("span"));
      text.textContent = `started ${clock(from)}–${clock(to)}`;
      this.windowNote.title = `Spans that started from ${new Date(from).toISOString()} to ${new Date(to).toISOString()} (the Monitor's bucket)`;
      given = true;
    }
    for (const [name, select] of [["find_kind", this.kind], ["find_status", this.status]]) {
      const value = query.get(/** @type {string} */ (name)) || "";
      const field = /** @type {HTMLSelectElement} */ (/** @type {unknown} */ (select));
      if (value && [...field.options].some((o) => o.value === value)) {
        field.value = value;
        given = true;
      }
    }
    const text = (query.get("find_text") || "").slice(0, 200);
    if (text) {
      this.text.value = text;
      given = true;
    }
    if (given) this.update();
    return given;
  }

  /** Put the keyboard in the text box. */
  focus() {
    this.text.focus();
    this.text.select();
  }

  /**
   * Open the next (1) or previous (-1) match after the selected span.
   *
   * @param {number} [step]
   * @returns {boolean} whether there was one
   */
  nextMatch(step = 1) {
    if (!this.find.active) return this.say("Type or pick something to find first.");
    return this.go((node) => this.find.isHit(node), step, "No span matches.");
  }

  /**
   * Open the next (1) or previous (-1) span that failed.
   *
   * @param {number} [step]
   * @returns {boolean} whether there was one
   */
  nextError(step = 1) {
    const data = this.timeline.data;
    // While a filter is set, only the errors it shows.
    const shown = (/** @type {SpanNode} */ node) => !data.keepStamp || node.keep === data.keepStamp;
    const none = data.keepStamp ? "No span failed among those shown." : "No span failed.";
    return this.go((node) => data.stateOf(node) === "error" && shown(node), step, none);
  }

  // ── private ─────────────────────────────────────────────────────────────────────────────

  /** @private */
  wire() {
    const form = this.form;
    form.addEventListener("submit", (event) => event.preventDefault());
    this.text.addEventListener("input", () => this.later("type", TYPE_PAUSE_MS, () => this.update()));
    for (const select of [this.kind, this.status, this.outcome]) {
      select.addEventListener("change", () => this.update());
    }
    this.min.addEventListener("input", () => this.later("type", TYPE_PAUSE_MS, () => this.update()));
    form.addEventListener("reset", () => {
      this.clearWindow();
      setTimeout(() => this.update(), 0); // after the reset
    });
    this.windowNote.querySelector("button")?.addEventListener("click", () => {
      this.clearWindow();
      this.update();
    });
    this.text.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.isComposing) {
        event.preventDefault();
        clearTimeout(this.timers.type);
        if (this.readFilter().text !== this.find.filter.text) this.update();
        this.nextMatch(event.shiftKey ? -1 : 1);
      } else if (event.key === "Escape" && this.text.value) {
        event.preventDefault();
        event.stopPropagation(); // Esc here clears the text; it closes nothing else
        this.text.value = "";
        this.update();
      }
    });
    for (const button of form.querySelectorAll("button[data-find]")) {
      const what = /** @type {HTMLElement} */ (button).dataset.find;
      button.addEventListener("click", () => {
        if (what === "next") this.nextMatch(1);
        else if (what === "previous") this.nextMatch(-1);
        else if (what === "error") this.nextError(1);
      });
    }
  }

  /** @private The form's values as a filter; a bad duration is marked and left out. */
  readFilter() {
    const filter = emptyFilter();
    filter.text = this.text.value.trim();
    filter.kind = this.kind.value;
    filter.status = this.status.value;
    filter.outcome = this.outcome.value;
    const raw = this.min.value.trim();
    const minMs = raw === "" ? 0 : Number(raw);
    const bad = raw !== "" && !(Number.isFinite(minMs) && minMs >= 0);
    this.min.toggleAttribute("aria-invalid", bad);
    filter.minMs = bad ? 0 : minMs;
    filter.from = this.window.from;
    filter.to = this.window.to;
    return filter;
  }

  /** @private The drill-down's window no longer narrows the matches. */
  clearWindow() {
    this.window = { from: 0, to: 0 };
    this.windowNote.hidden = true;
  }

  /** @private The form changed: match again, reveal the matches, ask the server if the text changed. */
  update() {
    const filter = this.readFilter();
    const textChanged = filter.text !== this.find.filter.text;
    this.find.setFilter(filter);
    this.note = "";
    if (textChanged) {
      this.asking?.abort();
      this.asking = null;
      this.serverState = "";
      clearTimeout(this.timers.server);
      if (filter.text) this.later("server", SERVER_PAUSE_MS, () => this.askServer(filter.text));
    }
    this.apply(true);
    if (this.find.active) this.timeline.view.scrollTo(0);
  }

  /** @private @param {boolean} reveal expand the matches' ancestors */
  apply(reveal) {
    this.find.apply({ reveal, now: nowNs() });
    this.form.dataset.active = String(this.find.active);
    this.timeline.tree.dataset.matches = this.find.active ? String(this.find.count) : "";
    this.timeline.requestFrame();
    this.drawCount();
  }

  /** @private Which spans hold the text in their attributes or events. @param {string} text */
  async askServer(text) {
    this.asking?.abort();
    const asking = new AbortController();
    this.asking = asking;
    this.serverState = "searching";
    this.drawCount();
    try {
      const found = await this.search(text, asking.signal);
      if (asking.signal.aborted) return;
      this.serverState = found.truncated ? "truncated" : "";
      this.serverLimit = typeof found.limit === "number" ? found.limit : 0;
      this.serverNotice = typeof found.notice === "string" ? found.notice : "";
      if (this.find.setHits(text, found.keys)) this.apply(true);
    } catch {
      if (asking.signal.aborted) return;
      this.serverState = "failed";
    } finally {
      if (this.asking === asking) this.asking = null;
      this.drawCount();
    }
  }

  /** @private Spans arrived or changed: the filter is applied again soon, the server asked again later. */
  dataChanged() {
    this.find.dataChanged();
    if (!this.find.active) return;
    if (!this.timers.live) {
      this.timers.live = setTimeout(() => {
        this.timers.live = 0;
        this.apply(false);
      }, LIVE_APPLY_MS);
    }
    const text = this.find.filter.text;
    if (text && !this.timers.liveSearch) {
      this.timers.liveSearch = setTimeout(() => {
        this.timers.liveSearch = 0;
        if (this.find.filter.text === text && !this.asking) this.askServer(text);
      }, LIVE_SEARCH_MS);
    }
  }

  /**
   * @private Select the next span in tree order for which `test` holds.
   * @param {(node: SpanNode) => boolean} test
   * @param {number} step 1 forward, -1 back
   * @param {string} none what to say when no span is found
   * @returns {boolean} whether one was
   */
  go(test, step, none) {
    const view = this.timeline.view;
    const node = this.find.next(view.selected || view.active, test, step);
    if (!node) return this.say(none);
    this.note = "";
    this.timeline.select(node.trace, node.id);
    this.drawCount();
    return true;
  }

  /** @private A short word in the count's place (until the filter next changes). @param {string} text @returns {false} */
  say(text) {
    this.note = text;
    this.drawCount();
    this.later("note", NOTE_MS, () => {
      this.note = "";
      this.drawCount();
    });
    return false;
  }

  /** @private "3 of 12 matches · searching attributes…" */
  drawCount() {
    const find = this.find;
    let text = this.note;
    if (!text && find.active) {
      const place = find.placeOf(this.timeline.view.selected);
      const n = find.count;
      text = `${place ? `${formatCount(place)} of ` : ""}${formatCount(n)} match${n === 1 ? "" : "es"}`;
      if (find.filter.text) {
        if (this.serverState === "searching") text += " · searching attributes…";
        else if (this.serverState === "failed") text += " · attributes not searched (server)";
        else if (this.serverState === "truncated") {
          const limit = this.serverLimit ? formatCount(this.serverLimit) : "the first";
          text += ` · attributes: stopped at ${limit} — type more to narrow`;
        }
      }
    }
    const title = this.serverState === "truncated" ? this.serverNotice : "";
    if (this.count.textContent !== text) this.count.textContent = text;
    if (this.count.title !== title) this.count.title = title;
  }

  /**
   * @private Run `action` once `ms` pass without another call for the same `name`.
   * @param {"type"|"server"|"note"} name
   * @param {number} ms
   * @param {() => void} action
   */
  later(name, ms, action) {
    clearTimeout(this.timers[name]);
    this.timers[name] = setTimeout(() => {
      this.timers[name] = 0;
      action();
    }, ms);
  }
}
