/**
 * The handle between the span tree and the span's details: drag it (mouse, pen, touch) or
 * use the arrow keys on it (Home/End: smallest/largest; double-click or Enter: back to the
 * default) to give the details more or less of the timeline. The share is kept as a
 * fraction of the panel (it follows the window's size) in the panel's `--detail-h`, set
 * through the CSSOM, and remembered in this browser.
 *
 * @module dashboard/detail_split
 */

const KEY = "agentdash.detailShare";
const MIN = 0.15; // the details' least share of the panel …
const MAX = 0.85; // … and most (the tree keeps a few rows)
const STEP = 0.05;

/** @param {number} share @returns {number} */
function clamp(share) {
  return Math.min(MAX, Math.max(MIN, share));
}

/**
 * @param {object} parts
 * @param {HTMLElement} parts.panel the timeline panel (it holds `--detail-h`)
 * @param {HTMLElement} parts.handle the separator
 */
export function setupDetailSplit({ panel, handle }) {
  const share = detailShare(panel, handle);
  handle.addEventListener("pointerdown", (event) => {
    if (event.button !== 0) return;
    event.preventDefault();
    handle.setPointerCapture(event.pointerId);
    handle.classList.add("dragging");
    const box = panel.getBoundingClientRect();
    const move = (/** @type {PointerEvent} */ e) => share.apply((box.bottom - e.clientY) / box.height);
    const end = () => {
      handle.classList.remove("dragging");
      handle.removeEventListener("pointermove", move);
      handle.removeEventListener("pointerup", end);
      handle.removeEventListener("pointercancel", end);
      share.keep(share.current());
    };
    handle.addEventListener("pointermove", move);
    handle.addEventListener("pointerup", end);
    handle.addEventListener("pointercancel", end);
  });
  handle.addEventListener("dblclick", () => share.keep(null));
  handle.addEventListener("keydown", (event) => {
    const moves = {
      ArrowUp: () => share.current() + STEP,
      ArrowDown: () => share.current() - STEP,
      Home: () => MIN,
      End: () => MAX,
    };
    if (event.key === "Enter") {
      event.preventDefault();
      share.keep(null);
    } else if (event.key in moves) {
      event.preventDefault();
      event.stopPropagation(); // not the tree's or the page's keys
      share.keep(moves[/** @type {keyof typeof moves} */ (event.key)]());
    }
  });
}

/**
 * The details' share of the panel: shown (`apply`), shown and remembered (`keep`), read
 * (`current`); set from what this browser remembered.
 * @param {HTMLElement} panel @param {HTMLElement} handle
 */
function detailShare(panel, handle) {
  /** @param {number|null} share null: the default (the details take what they need, ≤ 45%) */
  const apply = (share) => {
    if (share === null) {
      panel.classList.remove("detail-sized");
      panel.style.removeProperty("--detail-h");
      handle.setAttribute("aria-valuenow", "45");
      handle.setAttribute("aria-valuetext", "details: as tall as needed, up to 45% of the panel");
      return;
    }
    const percent = Math.round(clamp(share) * 100);
    panel.classList.add("detail-sized");
    panel.style.setProperty("--detail-h", `${percent}%`);
    handle.setAttribute("aria-valuenow", String(percent));
    handle.setAttribute("aria-valuetext", `details: ${percent}% of the panel`);
  };
  /** @param {number|null} share */
  const keep = (share) => {
    apply(share);
    try {
      if (share === null) localStorage.removeItem(KEY);
      else localStorage.setItem(KEY, String(clamp(share)));
    } catch {
      // storage refused (private mode): the size holds for this page
    }
  };
  const current = () => {
    const value = Number(panel.style.getPropertyValue("--detail-h").replace("%", ""));
    return Number.isFinite(value) && value > 0 ? value / 100 : 0.45;
  };
  handle.setAttribute("aria-valuemin", String(MIN * 100));
  handle.setAttribute("aria-valuemax", String(MAX * 100));
  let stored = null;
  try {
    stored = localStorage.getItem(KEY);
  } catch {
    stored = null;
  }
  apply(stored === null || !Number.isFinite(Number(stored)) ? null : Number(stored));
  return { apply, keep, current };
}
