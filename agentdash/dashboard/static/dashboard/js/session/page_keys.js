/**
 * The session page's keys, for the whole page (the timeline's own — arrows, Enter, Esc, zoom —
 * work while the tree has the focus, see tree_view.js): `?` shows them all in a dialog, `/`
 * finds spans, `j` / `k` open the next / previous span shown, `n` / `N` the next / previous
 * match, `e` the next error, `g` / `G` open the first / last span shown (scrolled to, with the
 * keyboard, as a click would), `s` to the scoring of the span open (the first span's if
 * none is), `c` to the chat's message box.
 * Keys typed into a field, or with Ctrl, Alt or ⌘, are the field's.
 *
 * @module dashboard/page_keys
 */

/**
 * @param {object} parts
 * @param {HTMLDialogElement} parts.dialog `#keymap`
 * @param {import("../timeline/timeline.js").Timeline} parts.timeline
 * @param {import("../timeline/find_bar.js").FindBar} parts.find
 * @param {HTMLTextAreaElement|null} parts.composer
 * @param {import("./panels.js").Panels} parts.panels
 * @param {import("../scores/session_scores.js").SessionScores} parts.scores
 */
export function setupPageKeys({ dialog, timeline, find, composer, panels, scores }) {
  const toTimeline = () => panels.showPanel("timeline");
  /** @type {Record<string, (() => unknown)|undefined>} each key's action */
  const actions = {
    "?": () => (dialog.open ? dialog.close() : dialog.showModal()),
    "/": () => {
      toTimeline();
      find.focus();
    },
    j: () => step(timeline, 1) && toTimeline(),
    k: () => step(timeline, -1) && toTimeline(),
    n: () => find.nextMatch(1) && toTimeline(),
    N: () => find.nextMatch(-1) && toTimeline(),
    e: () => {
      toTimeline();
      find.nextError(1);
    },
    g: () => edge(timeline, "first") && toTimeline(),
    G: () => edge(timeline, "last") && toTimeline(),
    s: () => {
      toTimeline();
      scores.focus();
    },
    c: () => {
      if (!composer) return;
      panels.showPanel("chat");
      composer.focus();
    },
  };
  for (const opener of document.querySelectorAll("[data-opens='keymap']")) {
    opener.addEventListener("click", () => dialog.showModal());
  }
  addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.ctrlKey || event.altKey || event.metaKey || event.isComposing) return;
    if (typing(event.target) || (dialog.open && event.key !== "?")) return;
    const action = actions[event.key];
    if (!action) return;
    event.preventDefault();
    action();
  });
}

/**
 * Whether keys at `target` are text being typed (or a choice being made).
 *
 * @param {EventTarget|null} target
 * @returns {boolean}
 */
function typing(target) {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  const tag = target.tagName;
  if (tag === "TEXTAREA" || tag === "SELECT") return true;
  if (tag !== "INPUT") return false;
  const type = /** @type {HTMLInputElement} */ (target).type;
  return !["button", "checkbox", "radio", "reset", "submit", "range", "color"].includes(type);
}

/**
 * Open the row after (or before) the selected one, among the rows shown.
 *
 * @param {import("../timeline/timeline.js").Timeline} timeline
 * @param {1|-1} by
 * @returns {boolean} whether there was a row to open
 */
function step(timeline, by) {
  const view = timeline.view;
  view.ensureRows();
  const rows = timeline.data.rows;
  if (!rows.length) return false;
  const from = view.selected && timeline.data.isShown(view.selected) ? view.selected.vi : -1;
  const to = from < 0 ? (by > 0 ? 0 : rows.length - 1) : Math.max(0, Math.min(rows.length - 1, from + by));
  timeline.select(rows[to].trace, rows[to].id);
  return true;
}

/**
 * Open the first (or last) row shown, scrolled to, with the keyboard on it.
 *
 * @param {import("../timeline/timeline.js").Timeline} timeline
 * @param {"first"|"last"} which
 * @returns {boolean} whether there was a row to open
 */
function edge(timeline, which) {
  const view = timeline.view;
  view.ensureRows();
  const rows = timeline.data.rows;
  if (!rows.length) return false;
  const row = which === "first" ? rows[0] : rows[rows.length - 1];
  timeline.select(row.trace, row.id);
  view.focusActive();
  return true;
}
