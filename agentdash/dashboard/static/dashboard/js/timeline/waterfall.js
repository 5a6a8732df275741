/**
 * The waterfall's time window, its axis and the overview of a whole trace.
 *
 * Every run of a session is a trace of its own, and each trace's bars use its own scale:
 * a row carries `--s` (start) and `--d` (duration), in ms from its trace's start, and `--e`,
 * its trace's length; the window is a fraction of a trace, `--f0` (where it starts) and
 * `--fd` (how much it shows), set once on the panel. Fitted (the default), every run fills
 * the bar column, a short first run and a long later one alike; zooming or panning moves the
 * same fraction of each. The axis is in ms of the focused trace (the selected span's, else
 * the first row's in view) and says which run it measures. Zooming, panning or a trace
 * growing changes two custom properties, never the rows. Ticks fall at 1/2/5×10^k ms; the
 * overview draws every span of the focused trace on a canvas, at most every 250 ms, with
 * the window over it.
 *
 * @module dashboard/waterfall
 */

import { el } from "../../../core/js/dom.js";

const MIN_WINDOW_MS = 0.001;
const FIT = 1.02; // fitted: the whole trace and a little room after its end
const TICK_SPACING_PX = 64;
const LABEL_PX = 44;
const OVERVIEW_EVERY_MS = 250;
const WHEEL_ZOOM = 0.0015;
const LINE_PX = 16;

/**
 * A tick step of 1, 2 or 5 × 10^k giving at most `maxTicks` ticks over `range`.
 *
 * @param {number} range ms
 * @param {number} maxTicks
 * @returns {number}
 */
export function niceStep(range, maxTicks) {
  const raw = range / Math.max(1, maxTicks);
  if (!(raw > 0) || !Number.isFinite(raw)) return 1;
  const pow = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5]) if (m * pow >= raw * (1 - 1e-9)) return m * pow;
  return 10 * pow;
}

/** The nice step below `step` (5 → 2 → 1 → 0.5 …). @param {number} step @returns {number} */
function smallerStep(step) {
  const pow = 10 ** Math.floor(Math.log10(step) + 1e-9);
  const m = Math.round(step / pow);
  return m >= 5 ? 2 * pow : m >= 2 ? pow : pow / 2;
}

function decimalsFor(/** @type {number} */ step) {
  return Math.max(0, Math.ceil(-Math.log10(step) - 1e-9));
}

/**
 * A tick's label: "0", "+250 ms", "+1.5 s", "+40 µs", "−20 ms" (as precise as the step).
 *
 * @param {number} ms the offset from the trace's start
 * @param {number} step the axis step, ms
 * @returns {string}
 */
export function formatOffset(ms, step) {
  if (Math.abs(ms) < step / 2) return "0";
  const sign = ms < 0 ? "−" : "+";
  const abs = Math.abs(ms);
  if (step < 1) return `${sign}${(abs * 1000).toFixed(decimalsFor(step * 1000))} µs`;
  if (abs < 1000) return `${sign}${abs.toFixed(decimalsFor(step))} ms`;
  return `${sign}${(abs / 1000).toFixed(decimalsFor(step / 1000))} s`;
}

function wheelPx(/** @type {WheelEvent} */ event, /** @type {number} */ delta) {
  return event.deltaMode === 1 ? delta * LINE_PX : event.deltaMode === 2 ? delta * 400 : delta;
}

export class Waterfall {
  /**
   * @param {object} parts
   * @param {HTMLElement} parts.scope where the window's custom properties are set
   * @param {HTMLElement} parts.ticks the axis' tick area (as wide as the bars)
   * @param {() => void} [parts.onChange] after the window moved
   */
  constructor({ scope, ticks, onChange }) {
    this.scope = scope;
    this.ticks = ticks;
    this.onChange = onChange || (() => {});
    /** the window, as fractions of a trace: its start and its width */
    this.f0 = 0;
    this.fd = FIT;
    this.auto = true;
    /** the focused trace's length, ms (what the axis measures) */
    this.extent = 0;
    this.width = 0;
    this.shown = "";
    this.ticksFor = "";
    /** @type {HTMLElement[]} */
    this.tickPool = [];
    new ResizeObserver((entries) => {
      this.width = entries[entries.length - 1].contentRect.width;
      this.drawTicks();
    }).observe(ticks);
    this.bindAxis();
    this.apply();
  }

  /** The first ms shown of the focused trace. */
  get v0() {
    return this.f0 * this.scale();
  }

  /** The ms shown of the focused trace. */
  get vd() {
    return this.fd * this.scale();
  }

  /** @private the focused trace's length, never 0 (a trace of one instant) */
  scale() {
    return Math.max(MIN_WINDOW_MS, this.extent);
  }

  /**
   * The focused trace's length: the axis measures it; the window (a fraction) stays.
   *
   * @param {number} ms
   */
  setExtent(ms) {
    this.extent = Math.max(0, ms);
    if (this.auto) {
      this.f0 = 0;
      this.fd = FIT;
    }
    this.apply();
  }

  /** Show every run whole, and keep following them as they grow. */
  fit() {
    this.auto = true;
    this.setExtent(this.extent);
  }

  /**
   * Zoom by `factor` (< 1: in) keeping the time under `frac` of the width in place.
   *
   * @param {number} factor
   * @param {number} [frac]
   */
  zoom(factor, frac = 0.5) {
    const at = this.f0 + frac * this.fd;
    const least = Math.max(1e-6, MIN_WINDOW_MS / this.scale());
    this.fd = Math.min(50, Math.max(least, this.fd * factor));
    this.f0 = at - frac * this.fd;
    this.moved();
  }

  /** @param {number} ms of the focused trace */
  pan(ms) {
    this.f0 += ms / this.scale();
    this.moved();
  }

  /** Center the window on `ms` of the focused trace (from the overview). @param {number} ms */
  center(ms) {
    this.f0 = ms / this.scale() - this.fd / 2;
    this.moved();
  }

  /** @private a change by the user: the window stops following the trace */
  moved() {
    this.auto = false;
    const lo = -this.fd * 0.5;
    const hi = Math.max(lo, 1 - this.fd * 0.5);
    this.f0 = Math.min(hi, Math.max(lo, this.f0));
    this.apply();
  }

  /** The fraction of the bar width under a pointer's x (0.5 when outside). @param {number} clientX */
  fracAt(clientX) {
    const rect = this.ticks.getBoundingClientRect();
    if (!rect.width || clientX < rect.left || clientX > rect.right) return 0.5;
    return (clientX - rect.left) / rect.width;
  }

  /**
   * The wheel over the waterfall: ctrl/⌘ zooms around the pointer, shift pans. Returns
   * whether it was ours (the caller then prevents the default).
   *
   * @param {WheelEvent} event
   * @returns {boolean}
   */
  wheel(event) {
    if (event.ctrlKey || event.metaKey) {
      const delta = wheelPx(event, event.deltaY || event.deltaX);
      this.zoom(Math.exp(Math.max(-300, Math.min(300, delta)) * WHEEL_ZOOM), this.fracAt(event.clientX));
      return true;
    }
    if (event.shiftKey || (event.currentTarget === this.ticks && event.deltaX)) {
      const delta = wheelPx(event, event.deltaX || event.deltaY);
      if (this.width) this.pan((delta / this.width) * this.vd);
      return true;
    }
    return false;
  }

  /** @private The axis pans when dragged, or with a horizontal wheel. */
  bindAxis() {
    const axis = this.ticks;
    axis.addEventListener("wheel", (event) => {
      if (this.wheel(event)) event.preventDefault();
      event.stopPropagation();
    }, { passive: false });
    let lastX = /** @type {number|null} */ (null);
    axis.addEventListener("pointerdown", (event) => {
      if (event.button !== 0) return;
      lastX = event.clientX;
      axis.setPointerCapture(event.pointerId);
      axis.classList.add("dragging");
    });
    axis.addEventListener("pointermove", (event) => {
      if (lastX === null || !this.width) return;
      const dx = event.clientX - lastX;
      lastX = event.clientX;
      if (dx) this.pan((-dx / this.width) * this.vd);
    });
    const end = () => {
      lastX = null;
      axis.classList.remove("dragging");
    };
    axis.addEventListener("pointerup", end);
    axis.addEventListener("pointercancel", end);
  }

  /** @private Two custom properties on the panel, and the ticks when what they say changed. */
  apply() {
    const key = `${this.f0}|${this.fd}`;
    const ticks = `${key}|${this.extent}`;
    if (ticks === this.ticksFor) return;
    this.ticksFor = ticks;
    this.drawTicks();
    if (key === this.shown) return;
    this.shown = key;
    this.scope.style.setProperty("--f0", String(this.f0));
    this.scope.style.setProperty("--fd", String(this.fd));
    this.onChange();
  }

  /** @private A handful of labelled ticks in ms of the focused trace, placed as fractions of
   * it (like the bars). */
  drawTicks() {
    if (!this.width) return;
    const scale = this.scale();
    const v0 = this.v0;
    const vd = this.vd;
    const room = vd * (1 - LABEL_PX / this.width); // a label must fit before the edge
    let step = niceStep(room, Math.floor(this.width / TICK_SPACING_PX));
    const labels = (/** @type {number} */ at) => Math.floor((v0 + room) / at) - Math.ceil(v0 / at) + 1;
    while (labels(step) < 2 && step > 1e-6) step = smallerStep(step); // two labels at least
    const first = Math.ceil(v0 / step);
    const last = Math.floor((v0 + vd) / step);
    let used = 0;
    for (let k = first; k <= last && used < 64; k += 1) {
      const t = k * step;
      if (t - v0 > room) break;
      let tick = this.tickPool[used];
      if (!tick) {
        tick = el("span", { class: "tl-tick" });
        this.tickPool.push(tick);
        this.ticks.append(tick);
      }
      tick.hidden = false;
      tick.style.setProperty("--t", String(t / scale));
      tick.textContent = formatOffset(t, step);
      used += 1;
    }
    for (let i = used; i < this.tickPool.length; i += 1) this.tickPool[i].hidden = true;
  }
}

/** The overview: a canvas with every span of a trace, and the window drawn over it. */
export class Overview {
  /**
   * @param {object} parts
   * @param {HTMLElement} parts.host holds the canvas and the window frame
   * @param {HTMLCanvasElement} parts.canvas
   * @param {(ctx: CanvasRenderingContext2D, width: number, height: number) => void} parts.paint
   * @param {(frac: number) => void} parts.onPick the user points at this fraction of the trace
   */
  constructor({ host, canvas, paint, onPick }) {
    this.host = host;
    this.canvas = canvas;
    this.paint = paint;
    this.last = 0;
    this.timer = 0;
    this.window = "";
    this.size = { width: 0, height: 0 };
    new ResizeObserver((entries) => {
      const box = entries[entries.length - 1].contentRect;
      this.size = { width: box.width, height: box.height };
      this.draw();
    }).observe(canvas);
    let rect = /** @type {DOMRect|null} */ (null);
    const pick = (/** @type {PointerEvent} */ event) => {
      if (rect && rect.width) onPick(Math.min(1, Math.max(0, (event.clientX - rect.left) / rect.width)));
    };
    host.addEventListener("pointerdown", (event) => {
      if (event.button !== 0) return;
      rect = canvas.getBoundingClientRect();
      host.setPointerCapture(event.pointerId);
      pick(event);
    });
    host.addEventListener("pointermove", (event) => {
      if (rect) pick(event);
    });
    const end = () => {
      rect = null;
    };
    host.addEventListener("pointerup", end);
    host.addEventListener("pointercancel", end);
  }

  /** Redraw soon: at once if the last drawing is 250 ms old, else when it will be. */
  request() {
    if (this.timer) return;
    const wait = Math.max(0, this.last + OVERVIEW_EVERY_MS - performance.now());
    this.timer = setTimeout(() => {
      this.timer = 0;
      this.draw();
    }, wait);
  }

  /** @private */
  draw() {
    this.last = performance.now();
    const { width, height } = this.size;
    if (!width || !height) return;
    const ratio = window.devicePixelRatio || 1;
    const w = Math.round(width * ratio);
    const h = Math.round(height * ratio);
    if (this.canvas.width !== w) this.canvas.width = w;
    if (this.canvas.height !== h) this.canvas.height = h;
    const ctx = this.canvas.getContext("2d");
    if (!ctx) return;
    ctx.clearRect(0, 0, w, h);
    this.paint(ctx, w, h);
  }

  /**
   * Where the window is, as fractions of the trace.
   *
   * @param {number} from
   * @param {number} to
   */
  setWindow(from, to) {
    const a = Math.min(1, Math.max(0, from));
    const b = Math.min(1, Math.max(a, to));
    const key = `${a.toFixed(4)}|${b.toFixed(4)}`;
    if (key === this.window) return;
    this.window = key;
    this.host.style.setProperty("--m0", a.toFixed(4));
    this.host.style.setProperty("--m1", b.toFixed(4));
  }
}

/**
 * Paint every span of a trace as a thin line at its time range, one line per span in tree
 * order, the lines squeezed into the canvas height; one path per kind.
 *
 * @param {CanvasRenderingContext2D} ctx
 * @param {number} w
 * @param {number} h
 * @param {object} trace
 * @param {number} trace.count spans
 * @param {number} trace.startNs
 * @param {number} trace.ms extent
 * @param {(visit: (node: any, index: number) => void) => void} trace.walk
 * @param {number} nowNs
 * @param {Record<string, string>} colors by name
 * @param {(node: any) => string} colorOf a span's colour name
 */
export function paintTrace(ctx, w, h, trace, nowNs, colors, colorOf) {
  if (!trace.count || !(trace.ms > 0)) return;
  const xPerNs = w / (trace.ms * 1e6);
  const rowH = h / trace.count;
  const lineH = Math.max(1, rowH);
  /** @type {Map<string, Path2D>} */
  const paths = new Map();
  trace.walk((node, index) => {
    const color = colorOf(node);
    let path = paths.get(color);
    if (!path) {
      path = new Path2D();
      paths.set(color, path);
    }
    const x0 = (node.start - trace.startNs) * xPerNs;
    const x1 = ((node.end ?? nowNs) - trace.startNs) * xPerNs;
    path.rect(x0, index * rowH, Math.max(1, x1 - x0), lineH);
  });
  for (const [color, path] of paths) {
    ctx.fillStyle = colors[color] || colors.other;
    ctx.fill(path);
  }
}
