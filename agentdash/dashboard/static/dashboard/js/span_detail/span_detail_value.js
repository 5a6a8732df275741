/**
 * One value in the span details pane: a text or JSON block collapsed to a few lines, with
 * "Show all" / "Show less" and, where asked, a Copy button. Span values are untrusted and may
 * be huge (a callback can put megabytes on a span): the block only ever puts a bounded slice
 * in the page (textContent, never markup) and says how much it leaves out; Copy copies the
 * whole value.
 *
 * @module dashboard/span_detail_value
 */

import { el } from "../../../core/js/dom.js";
import { formatCount } from "../common/format.js";

/** Lines shown while collapsed. */
export const COLLAPSED_LINES = 6;
/** Characters shown while collapsed (a value of one long line wraps to a few lines). */
export const COLLAPSED_CHARS = 600;
/** The most characters ever put in the page for one value, expanded. */
export const SHOWN_CHARS = 100_000;
/** Longer JSON text is shown as it is, not parsed and indented (that would stall the page). */
export const PRETTY_CHARS = 200_000;
const STATUS_MS = 3000;

/**
 * A value as text for a block: a string as it is; anything else as indented JSON. A string
 * that holds a JSON object or array (span attributes carry serialized payloads) is indented
 * too, unless it is too long to parse without a stall or too deep to print.
 *
 * @param {unknown} value
 * @returns {{text: string, json: boolean}} json: the text is (indented) JSON
 */
export function valueText(value) {
  if (typeof value === "string") {
    const trimmed = value.trim();
    if (value.length <= PRETTY_CHARS && (trimmed.startsWith("{") || trimmed.startsWith("["))) {
      const parsed = parseJson(trimmed);
      if (parsed.ok) {
        const text = stringify(parsed.value);
        if (text !== null) return { text, json: true };
      }
    }
    return { text: value, json: false };
  }
  if (value === undefined) return { text: "", json: false };
  const text = stringify(value);
  return text === null ? { text: String(value), json: false } : { text, json: true };
}

/**
 * `JSON.parse` that says whether it worked (span payloads may have been cut at the
 * runtime's size cap, which leaves them unparsable).
 *
 * @param {string} text
 * @returns {{ok: true, value: any}|{ok: false}}
 */
export function parseJson(text) {
  if (typeof text !== "string" || text.length > PRETTY_CHARS) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/**
 * Indented JSON, or null for what cannot be printed (too deep for the stack, a cycle).
 *
 * @param {unknown} value
 * @returns {string|null} "" for what JSON has no text for (undefined, a function)
 */
function stringify(value) {
  try {
    return JSON.stringify(value, null, 2) ?? "";
  } catch {
    return null;
  }
}

/**
 * `text` cut to at most `max` characters, never between the halves of a surrogate pair.
 *
 * @param {string} text
 * @param {number} max
 * @returns {string}
 */
function cut(text, max) {
  if (text.length <= max) return text;
  let end = max;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return text.slice(0, end);
}

/** The collapsed view: the first lines, within the collapsed character budget. @param {string} text */
function preview(text) {
  let end = -1;
  for (let line = 0; line < COLLAPSED_LINES; line += 1) {
    end = text.indexOf("\n", end + 1);
    if (end < 0 || end > COLLAPSED_CHARS) return cut(text, COLLAPSED_CHARS);
  }
  return text.slice(0, end);
}

/** @param {string} text @returns {number} its lines, counted up to 100,001 */
function lineCount(text) {
  let count = 1;
  for (let at = text.indexOf("\n"); at >= 0 && count <= 100_000; at = text.indexOf("\n", at + 1)) {
    count += 1;
  }
  return count;
}

/**
 * @typedef {object} BlockOptions
 * @property {string} [label] a heading over the block ("Arguments")
 * @property {string} [name] what the block's buttons name it for screen readers ("Copy the
 *   result"), when it has no label
 * @property {string} [key] names the block within the pane, so its expanded state and focus
 *   survive a redraw (a new version of the span)
 * @property {Set<string>} [expanded] keys of the blocks the reader expanded
 * @property {boolean} [copy] offer a Copy button (copies the whole value)
 * @property {boolean} [mono] monospace (JSON, code); prose otherwise
 * @property {string} [note] a short remark after the label ("cut at 16 KB by the runtime")
 */

/**
 * A block for `value` (see {@link valueText}), collapsed unless the reader expanded it.
 *
 * @param {unknown} value
 * @param {BlockOptions} [options]
 * @returns {HTMLElement}
 */
export function valueBlock(value, { label, name, key, expanded, copy = false, mono, note } = {}) {
  const { text, json } = valueText(value);
  const pre = el("pre", { class: `value-text${mono ?? json ? " mono" : ""}` });
  const block = el("div", { class: "value", attrs: { "data-key": key } });
  const bar = [];
  if (label) bar.push(el("span", { class: "value-label", text: label }));
  if (note) bar.push(el("span", { class: "value-note", text: note }));
  /** @type {HTMLElement|null} */
  let status = null;
  if (copy) {
    const button = el("button", {
      class: "link value-copy",
      text: "Copy",
      attrs: { type: "button", "data-focus": key ? `${key}:copy` : null, "aria-label": `Copy the ${(label || name || "value").toLowerCase()}` },
    });
    status = el("span", { class: "value-status", attrs: { role: "status" } });
    button.addEventListener("click", () => copyText(text, button, /** @type {HTMLElement} */ (status)));
    bar.push(button, status);
  }
  if (bar.length) block.append(el("div", { class: "value-bar", children: bar }));
  block.append(pre);

  const short = preview(text);
  if (short.length === text.length) {
    pre.textContent = text;
    return block;
  }
  const lines = lineCount(text);
  const size = lines > 100_000 ? "100,000+ lines" : lines > 1 ? `${formatCount(lines)} lines` : `${formatCount(text.length)} characters`;
  const toggle = el("button", {
    class: "link value-toggle",
    attrs: { type: "button", "data-focus": key ? `${key}:toggle` : null },
  });
  const hidden = el("span", { class: "value-hidden" });
  const draw = (/** @type {boolean} */ open) => {
    const shown = open ? cut(text, SHOWN_CHARS) : short;
    pre.textContent = shown;
    toggle.textContent = open ? "Show less" : `Show all (${size})`;
    toggle.setAttribute("aria-expanded", String(open));
    const left = text.length - shown.length;
    hidden.textContent = left > 0 ? `${formatCount(left)} more characters not shown${copy ? " (Copy copies all)" : ""}` : "";
    block.dataset.collapsed = String(!open);
    if (key && expanded) {
      if (open) expanded.add(key);
      else expanded.delete(key);
    }
  };
  toggle.addEventListener("click", () => draw(block.dataset.collapsed === "true"));
  draw(Boolean(key && expanded && expanded.has(key)));
  block.append(el("div", { class: "value-more", children: [toggle, hidden] }));
  return block;
}

/**
 * Copy `text`: the Clipboard API where the page may use it, else a selected, off-screen
 * textarea and the browser's copy command; the status element says which happened.
 *
 * @param {string} text
 * @param {HTMLElement} button focus goes back to it
 * @param {HTMLElement} status
 */
export async function copyText(text, button, status) {
  let done = false;
  if (navigator.clipboard && typeof navigator.clipboard.writeText === "function") {
    try {
      await navigator.clipboard.writeText(text);
      done = true;
    } catch {
      done = false; // refused (no permission, page not focused): try the copy command
    }
  }
  if (!done) done = copyWithCommand(text, button);
  say(status, done ? "Copied" : "Could not copy: select the text and copy it");
}

/** @param {string} text @param {HTMLElement} button @returns {boolean} whether it was copied */
function copyWithCommand(text, button) {
  const area = el("textarea", {
    class: "copy-buffer",
    attrs: { readonly: true, tabindex: "-1", "aria-hidden": "true" },
  });
  /** @type {HTMLTextAreaElement} */ (area).value = text;
  (button.parentElement || document.body).append(area);
  let done = false;
  try {
    /** @type {HTMLTextAreaElement} */ (area).select();
    done = document.execCommand("copy");
  } catch {
    done = false;
  } finally {
    area.remove();
    button.focus();
  }
  return done;
}

/** @type {WeakMap<HTMLElement, number>} */
const clearing = new WeakMap();

/** @param {HTMLElement} status @param {string} text said for a few seconds */
function say(status, text) {
  status.textContent = text;
  clearTimeout(clearing.get(status));
  clearing.set(status, window.setTimeout(() => { status.textContent = ""; }, STATUS_MS));
}
