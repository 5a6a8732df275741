/**
 * The timeline's tree on screen, virtualized: only the rows in view, plus a margin, exist in
 * the DOM. A pool of row elements (span_row.js) is placed over a spacer as tall as every row
 * (`--rows` × `--row-h`); scrolling reassigns them. The rows to show are re-derived from the
 * SpanTree at most once per frame when its structure changed, paced so that a slow flatten
 * (a huge tree) leaves frames free; the row at the top of the view stays put meanwhile.
 *
 * One tab stop (roving tabindex): the active row has tabindex 0; while it is scrolled out of
 * the DOM the tree itself is the stop, and focusing it brings the row back. ↑/↓, Home/End,
 * PageUp/PageDown move; ← collapses or goes to the parent, → expands or goes to the first
 * child; Enter/Space open the details, Esc closes them. A click on the twisty toggles, on the
 * row opens it. The scroll position is tracked, never read back inside a frame (a read after
 * the frame's writes would force a layout).
 *
 * @module dashboard/tree_view
 */

import { outOfOrder } from "./dom_order.js";
import { nowNs } from "../common/format.js";
import { hideRow, makeRow, paintExtent, paintRow, paintRunning, placeRow } from "./span_row.js";

export const ROW_H = 28;
const MARGIN_ROWS = 10;
const FLATTEN_SPACING = 3; // after a flatten that took t ms, new data waits 3·t ms for the next
const RECENTER_MS = 500;

/** @typedef {import("./span_tree.js").SpanNode} SpanNode */
/** @typedef {import("./span_row.js").Row} Row */

export class TreeView {
  /**
   * @param {object} parts
   * @param {HTMLElement} parts.tree the `role=tree` element the rows are placed in
   * @param {HTMLElement} parts.body the scrolling element around it
   * @param {HTMLElement} parts.axis the sticky axis above the rows
   * @param {import("./span_tree.js").SpanTree} parts.data
   * @param {() => void} parts.requestFrame
   * @param {(node: SpanNode) => void} parts.onOpen a row is to be opened (Enter, Space, a click)
   * @param {() => boolean} parts.onEscape Esc; returns whether it closed something
   * @param {(key: string) => boolean} parts.onKey any other key; returns whether it was used
   */
  constructor({ tree, body, axis, data, requestFrame, onOpen, onEscape, onKey }) {
    this.tree = tree;
    this.body = body;
    this.data = data;
    this.requestFrame = requestFrame;
    this.onOpen = onOpen;
    this.onEscape = onEscape;
    this.onKey = onKey;
    /** @type {Row[]} */
    this.pool = [];
    /** @type {WeakMap<Element, Row>} */
    this.rowOf = new WeakMap();
    /** @type {SpanNode|null} the row with the tab stop */
    this.active = null;
    /** @type {SpanNode|null} the row whose details are open */
    this.selected = null;
    this.top = 0;
    this.viewH = 0;
    this.treeTop = 0;
    this.parking = false;
    this.flattenAfter = 0;
    this.flattenTimer = 0;
    /** @type {{node: SpanNode, until: number}|null} a row to center again if the view resizes */
    this.recenter = null;
    tree.setAttribute("tabindex", "-1");
    body.addEventListener("scroll", () => {
      this.top = body.scrollTop;
      requestFrame();
    }, { passive: true });
    const sizes = new ResizeObserver(() => this.resized());
    sizes.observe(body);
    sizes.observe(axis); // shown or hidden (a narrow panel): the rows start elsewhere
    tree.addEventListener("click", (event) => this.click(event));
    tree.addEventListener("keydown", (event) => this.key(event));
    tree.addEventListener("focus", () => {
      if (!this.parking) this.reveal();
    });
  }

  /** @returns {SpanNode|null} the span of the first row in view, if any */
  get first() {
    const rows = this.data.rows;
    return rows.length ? rows[Math.min(rows.length - 1, Math.floor(this.top / ROW_H))] : null;
  }

  /** One frame's work: the rows again if the tree changed (paced), then the rows in view. */
  frame() {
    if (this.data.changed) {
      const wait = this.flattenAfter - performance.now();
      if (wait <= 0) this.reflatten(true);
      else if (!this.flattenTimer) {
        this.flattenTimer = setTimeout(() => {
          this.flattenTimer = 0;
          this.requestFrame();
        }, wait);
      }
    }
    this.render();
  }

  /** The rows now, for a user's action. */
  ensureRows() {
    if (this.data.changed) this.reflatten(false);
  }

  /**
   * Show a row: expand its ancestors, make it active, scroll to it (centered).
   *
   * @param {SpanNode} node
   * @param {boolean} scroll
   */
  reach(node, scroll) {
    for (let up = node.parent; up; up = up.parent) {
      if (up.collapsed) {
        up.collapsed = false;
        this.data.changed = true;
      }
    }
    this.ensureRows();
    if (!this.data.isShown(node)) return; // a filter hides it (span_find.js)
    this.active = node;
    if (scroll) {
      this.scrollToRow(node.vi, true);
      this.recenter = { node, until: performance.now() + RECENTER_MS };
    }
    this.render();
  }

  /** Running spans' bars and clocks, and the scale of running traces, in the rows in view
   * only. @param {number} now Unix ns */
  tick(now) {
    for (const row of this.pool) {
      const node = row.node;
      if (!node) continue;
      if (node.running) paintRunning(row, node, now);
      const trace = this.data.traces.get(node.trace);
      if (trace && trace.running) paintExtent(row, trace, now);
    }
  }

  /**
   * @private Flatten the tree; the row at the top of the view stays where it is.
   * @param {boolean} paced the next flatten waits in proportion to this one's time
   */
  reflatten(paced) {
    const rows = this.data.rows;
    const top = this.top;
    let anchor = null;
    let offset = 0;
    if (top > 0 && rows.length) {
      const i = Math.min(rows.length - 1, Math.floor(top / ROW_H));
      anchor = rows[i];
      offset = top - i * ROW_H;
    }
    const began = performance.now();
    this.data.flatten();
    if (paced) this.flattenAfter = performance.now() + (performance.now() - began) * FLATTEN_SPACING;
    this.tree.style.setProperty("--rows", String(rows.length));
    while (anchor && !this.data.isShown(anchor)) anchor = anchor.parent;
    if (anchor && anchor.vi * ROW_H + offset !== top) this.scrollTo(anchor.vi * ROW_H + offset);
  }

  /** Put the pooled rows on the rows in view (plus a margin). */
  render() {
    const data = this.data;
    const rows = data.rows;
    const top = Math.min(this.top, Math.max(0, this.treeTop + rows.length * ROW_H - this.viewH));
    const first = Math.max(0, Math.floor(top / ROW_H) - MARGIN_ROWS);
    const last = Math.min(rows.length, Math.ceil((top + this.viewH) / ROW_H) + MARGIN_ROWS);
    if (this.active && !data.isShown(this.active)) {
      let up = this.active.parent;
      while (up && !data.isShown(up)) up = up.parent;
      this.active = up;
    }
    if (!this.active && rows.length) this.active = this.first;
    const focused = document.activeElement;
    const free = [];
    for (const row of this.pool) {
      const node = row.node;
      if (node && node.row === row && data.isShown(node) && node.vi >= first && node.vi < last) continue;
      if (row.el === focused) this.parkFocus();
      if (node && node.row === row) node.row = null;
      row.node = null;
      free.push(row);
    }
    const now = nowNs();
    for (let i = first; i < last; i += 1) {
      const node = rows[i];
      let row = node.row;
      if (!row) {
        row = free.pop() || this.newRow();
        row.node = node;
        row.ver = -1;
        node.row = row;
      }
      placeRow(row, node, { active: node === this.active, selected: node === this.selected });
      if (row.ver !== node.ver || row.epoch !== data.epoch) {
        row.ver = node.ver;
        row.epoch = data.epoch;
        paintRow(row, node, data.stateOf(node), data.traces.get(node.trace), now, findOf(data, node));
      }
      paintExtent(row, data.traces.get(node.trace), now);
    }
    for (const row of free) hideRow(row);
    this.keepDomOrder(first, last);
    const stop = rows.length && !(this.active && this.active.row) ? "0" : "-1";
    if (this.tree.getAttribute("tabindex") !== stop) this.tree.setAttribute("tabindex", stop);
  }

  /** @private Pooled rows are reused in any order and placed by --y; a screen reader's
   * browse mode reads the document's order, so the rows in view are put in row order again
   * when reuse mixed them, moving as few as that takes (a row recycled from one end to the
   * other is one move; focus stays where it was). @param {number} start @param {number} end */
  keepDomOrder(start, end) {
    const rows = this.data.rows;
    const els = [];
    for (let i = start; i < end; i++) els.push(/** @type {Row} */ (rows[i].row).el); // render() gave each row in view one
    let mixed = false;
    for (let i = 1; i < els.length && !mixed; i++) {
      mixed = !(els[i - 1].compareDocumentPosition(els[i]) & Node.DOCUMENT_POSITION_FOLLOWING);
    }
    if (!mixed) return;
    const place = new Map([...this.tree.children].map((el, at) => [el, at]));
    const move = outOfOrder(els.map((el) => /** @type {number} */ (place.get(el))));
    const focused = document.activeElement;
    for (let i = els.length - 1; i >= 0; i--) {
      if (move.has(i)) this.tree.insertBefore(els[i], i + 1 < els.length ? els[i + 1] : null);
    }
    if (focused instanceof HTMLElement && focused !== document.activeElement && this.tree.contains(focused)) {
      focused.focus({ preventScroll: true });
    }
  }

  /** @private */
  newRow() {
    const row = makeRow();
    this.rowOf.set(row.el, row);
    this.pool.push(row);
    this.tree.append(row.el);
    return row;
  }

  /** @private The view changed size (the details opened, a narrow panel): the row in use
   * stays in view. Layout is clean here, so reading sizes costs nothing. */
  resized() {
    this.viewH = this.body.clientHeight;
    this.treeTop = this.tree.offsetTop;
    const center = this.recenter && performance.now() < this.recenter.until ? this.recenter.node : null;
    const keep = center || (this.tree.contains(document.activeElement) ? this.active : this.selected);
    if (keep && this.data.isShown(keep)) this.scrollToRow(keep.vi, Boolean(center));
    this.recenter = null;
    this.requestFrame();
  }

  /** @private Clicking the twisty toggles; clicking the row opens it. @param {MouseEvent} event */
  click(event) {
    const target = event.target instanceof Element ? event.target : null;
    const rowEl = target && target.closest(".span");
    const row = rowEl && this.rowOf.get(rowEl);
    if (!row || !row.node) return;
    const node = row.node;
    this.active = node;
    if (target.closest(".twisty") && node.children.length) this.toggle(node);
    else this.onOpen(node);
  }

  /** @private @param {KeyboardEvent} event */
  key(event) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    this.ensureRows();
    const rows = this.data.rows;
    if (!rows.length) return;
    const node = this.active && this.data.isShown(this.active) ? this.active : rows[0];
    const i = node.vi;
    const page = Math.max(1, Math.floor((this.viewH - this.treeTop) / ROW_H) - 1);
    const open = node.children.length && !node.collapsed;
    switch (event.key) {
      case "ArrowDown": this.moveTo(i + 1); break;
      case "ArrowUp": this.moveTo(i - 1); break;
      case "Home": this.moveTo(0); break;
      case "End": this.moveTo(rows.length - 1); break;
      case "PageDown": this.moveTo(i + page); break;
      case "PageUp": this.moveTo(i - page); break;
      case "ArrowRight":
        if (node.children.length && node.collapsed) this.toggle(node);
        else this.moveTo(open ? i + 1 : i);
        break;
      case "ArrowLeft":
        if (open) this.toggle(node);
        else this.moveTo(node.parent ? node.parent.vi : i);
        break;
      case "Enter":
      case " ":
        this.active = node;
        this.onOpen(node);
        break;
      case "Escape":
        if (!this.onEscape()) return;
        break;
      default:
        if (!this.onKey(event.key)) return;
    }
    event.preventDefault();
  }

  /** @private Make row `i` the active one, in view and focused. @param {number} i */
  moveTo(i) {
    const rows = this.data.rows;
    const at = Math.max(0, Math.min(rows.length - 1, i));
    this.active = rows[at];
    this.scrollToRow(at, false);
    this.render();
    this.focusActive();
  }

  /** @private Collapse or expand at once (the rows are derived right away). @param {SpanNode} node */
  toggle(node) {
    node.collapsed = !node.collapsed;
    this.active = node;
    this.data.changed = true;
    this.reflatten(false);
    this.render();
    if (this.tree.contains(document.activeElement)) this.focusActive();
    this.requestFrame();
  }

  /** @private The tree got the focus (Tab, or the active row left the DOM and came back to
   * mind): the active row takes it, scrolled into view. */
  reveal() {
    this.ensureRows();
    if (!this.data.rows.length) return;
    if (!this.active || !this.data.isShown(this.active)) this.active = this.first;
    this.scrollToRow(/** @type {SpanNode} */ (this.active).vi, false); // there are rows: a first
    this.render();
    this.focusActive();
  }

  /** @private A focused row is about to be reused: the tree keeps the focus meanwhile. */
  parkFocus() {
    this.parking = true;
    this.tree.setAttribute("tabindex", "0");
    this.tree.focus({ preventScroll: true });
    this.parking = false;
  }

  /** Focus the active row (when it is in the DOM). */
  focusActive() {
    const row = this.active && this.active.row;
    if (row && document.activeElement !== row.el) row.el.focus({ preventScroll: true });
  }

  /**
   * @private Scroll so that row `i` is in view (below the sticky axis), or centered.
   * @param {number} i @param {boolean} center
   */
  scrollToRow(i, center) {
    const top = this.top;
    const rowTop = i * ROW_H;
    const room = Math.max(ROW_H, this.viewH - this.treeTop);
    let next = top;
    if (center) next = rowTop - (room - ROW_H) / 2;
    else if (rowTop < top) next = rowTop;
    else if (rowTop + ROW_H > top + room) next = rowTop + ROW_H - room;
    if (next !== top) this.scrollTo(next);
  }

  /** Scroll the tree to `top` (px). @param {number} top */
  scrollTo(top) {
    this.top = Math.max(0, top);
    this.body.scrollTop = this.top;
  }
}

/**
 * How a row shows the filter (span_find.js): a match, an ancestor kept for one, or neither.
 *
 * @param {import("./span_tree.js").SpanTree} data
 * @param {SpanNode} node
 * @returns {{match: "hit"|"context", text: string}|undefined}
 */
function findOf(data, node) {
  if (!data.keepStamp) return undefined;
  return { match: node.hit === data.keepStamp ? "hit" : "context", text: data.findText };
}
