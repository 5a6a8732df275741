/**
 * The Monitor page's charts, drawn as SVG from the page's own numbers (its JSON script, the
 * same document as /monitor/stats.json) with DOM calls only; colours from the theme's CSS
 * classes. Each bar and point has a title with its bucket and value; the numbers are also in
 * the table under the charts.
 *
 * @module monitor/monitor
 */

import { HEIGHT, WIDTH, drillHref, lineRuns, niceTop, stackedBars } from "./chart_model.js";
import { keepCurrent } from "./monitor_live.js";

const SVG = "http://www.w3.org/2000/svg";
const STATUSES = ["succeeded", "failed", "cancelled", "waiting", "running", "queued"];
const DECISIONS = ["allowed", "redacted", "limit", "blocked", "unsafe"];

/**
 * @param {string} name @param {Record<string, string|number>} attrs
 * @returns {SVGElement}
 */
function svg(name, attrs = {}) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  return node;
}

/** @param {SVGElement} node @param {string} text */
function titled(node, text) {
  const title = svg("title");
  title.textContent = text;
  node.append(title);
  return node;
}

/**
 * An axis number, short: 2.5, 250, 25k, 2.5M.
 *
 * @param {number} n
 */
function compact(n) {
  if (n >= 1e6) return `${+(n / 1e6).toPrecision(3)}M`;
  if (n >= 1e3) return `${+(n / 1e3).toPrecision(3)}k`;
  return `${+n.toPrecision(3)}`;
}

/** @param {string} iso */
function when(iso) {
  return iso.slice(0, 16).replace("T", " ");
}

/**
 * One chart: its frame, the axis' top and its bars or lines.
 *
 * @param {HTMLElement} figure @param {number} top @param {string} unit
 * @returns {SVGElement} the group to draw in
 */
function frame(figure, top, unit) {
  const root = svg("svg", { viewBox: `-50 -8 ${WIDTH + 58} ${HEIGHT + 16}`, role: "img", class: "chart-svg" });
  root.setAttribute("aria-label", `${figure.querySelector("figcaption")?.textContent || "chart"}; the table below has its numbers`);
  for (const fraction of [0, 0.5, 1]) {
    const y = HEIGHT - fraction * HEIGHT;
    root.append(svg("line", { x1: 0, x2: WIDTH, y1: y, y2: y, class: "grid" }));
    const label = svg("text", { x: -6, y: y + 4, class: "axis", "text-anchor": "end" });
    label.textContent = `${compact(top * fraction)}${fraction === 1 ? unit : ""}`;
    root.append(label);
  }
  const plot = svg("g");
  root.append(plot);
  figure.append(root);
  return plot;
}

/**
 * The chart's key: what each colour is.
 *
 * @param {HTMLElement} figure @param {string[]} parts
 */
function legend(figure, parts) {
  const list = document.createElement("ul");
  list.className = "legend";
  for (const part of parts) {
    const item = document.createElement("li");
    item.className = `part-${part}`;
    item.textContent = part;
    list.append(item);
  }
  figure.append(list);
}

/**
 * @param {HTMLElement} figure @param {any[]} series @param {string[]} parts
 * @param {(bucket: any, part: string) => number} value @param {string} unit
 * @param {((bucket: any, part: string) => string) | null} [link] where a bar leads
 */
function bars(figure, series, parts, value, unit, link = null) {
  const values = series.map((b) => parts.map((p) => value(b, p)));
  const top = niceTop(Math.max(0, ...values.map((v) => v.reduce((a, n) => a + n, 0))));
  const plot = frame(figure, top, unit);
  for (const shape of stackedBars(values, top)) {
    const bucket = series[shape.bucket];
    const rect = svg("rect", {
      x: shape.x, y: shape.y, width: shape.width, height: shape.height,
      class: `bar part-${parts[shape.part]}`, "data-value": shape.value,
    });
    const label = `${when(bucket.t)}: ${shape.value} ${parts[shape.part]}`;
    if (link) {
      const anchor = svg("a", { href: link(bucket, parts[shape.part]), class: "bar-link" });
      anchor.setAttribute("aria-label", `${label}: the sessions`);
      anchor.append(titled(rect, `${label} (open the sessions)`));
      plot.append(anchor);
    } else {
      plot.append(titled(rect, label));
    }
  }
  legend(figure, parts.filter((_, i) => values.some((v) => v[i] > 0)));
}

/**
 * @param {HTMLElement} figure @param {any[]} series @param {string[]} names
 * @param {(bucket: any, name: string) => number|null} value @param {string} unit
 */
function lines(figure, series, names, value, unit) {
  const all = series.flatMap((b) => names.map((n) => value(b, n))).filter((v) => v !== null);
  const top = niceTop(Math.max(0, .../** @type {number[]} */ (all)));
  const plot = frame(figure, top, unit);
  for (const name of names) {
    for (const points of lineRuns(series.map((b) => value(b, name)), top)) {
      if (points.includes(" ")) {
        plot.append(svg("polyline", { points, class: `line part-${name}` }));
      } else { // a bucket alone between empty ones: a dot, or it would not show
        const [cx, cy] = points.split(",");
        plot.append(svg("circle", { cx, cy, r: 3.5, class: `dot part-${name}` }));
      }
    }
  }
  // Each bucket's values as a title on an invisible column: hover (or a screen reader)
  // reads them.
  const slot = WIDTH / (series.length || 1);
  series.forEach((bucket, i) => {
    const known = names.filter((n) => value(bucket, n) !== null);
    if (!known.length) return;
    const text = known.map((n) => `${n} ${value(bucket, n)}${unit}`).join(", ");
    plot.append(titled(svg("rect", { x: i * slot, y: 0, width: slot, height: HEIGHT, class: "hover-column" }),
      `${when(bucket.t)}: ${text}`));
  });
  legend(figure, names);
}

/**
 * Every chart of ``stats`` (what was drawn before is cleared), and the totals' numbers.
 *
 * @param {any} stats the document of /monitor/stats.json
 */
function draw(stats) {
  const series = stats.series || [];
  /** @type {Record<string, HTMLElement>} */
  const figures = {};
  for (const figure of document.querySelectorAll("figure[data-chart]")) {
    for (const child of [...figure.children]) if (child.tagName !== "FIGCAPTION") child.remove();
    figures[/** @type {HTMLElement} */ (figure).dataset.chart || ""] = /** @type {HTMLElement} */ (figure);
  }
  const filters = stats.filters || {};
  const step = stats.range?.step_s || 300;
  bars(figures.runs, series, STATUSES, (b, s) => b.runs_by_status?.[s] || 0, "",
    (b, s) => drillHref(b.t, step, filters, s));
  lines(figures.model, series, ["p50", "p95", "p99"], (b, p) => b.model_seconds?.[p] ?? null, " s");
  bars(figures.tokens, series, ["in", "out"], (b, p) => (p === "in" ? b.tokens_in : b.tokens_out) || 0, "");
  bars(figures.tools, series, ["ok", "errors"], (b, p) => (p === "ok" ? b.tool_calls - b.tool_errors : b.tool_errors) || 0, "");
  if (figures.decisions) bars(figures.decisions, series, DECISIONS, (b, d) => b.decisions?.[d] || 0, "");
  const totals = stats.totals || {};
  for (const node of document.querySelectorAll("[data-stat]")) {
    const name = /** @type {HTMLElement} */ (node).dataset.stat || "";
    if (name === "error_rate") {
      node.textContent = totals.error_rate === null || totals.error_rate === undefined ? "—" : `${Math.round(totals.error_rate * 100)} %`;
    } else if (typeof totals[name] === "number") {
      node.textContent = String(totals[name]);
    }
  }
}

/**
 * The range form: From and To only for a custom range (not sent otherwise, so that a named
 * range is what is asked), read in the reader's own time zone (sent as tz).
 */
function rangeForm() {
  const select = /** @type {HTMLSelectElement|null} */ (document.getElementById("monitor-range"));
  const zone = /** @type {HTMLInputElement|null} */ (document.getElementById("monitor-tz"));
  if (!select || !zone) return;
  zone.value = Intl.DateTimeFormat().resolvedOptions().timeZone || "";
  const custom = /** @type {HTMLElement[]} */ ([...document.querySelectorAll(".custom-range")]);
  const show = () => {
    for (const label of custom) {
      label.hidden = select.value !== "custom";
      const input = label.querySelector("input");
      if (input) input.disabled = select.value !== "custom";
    }
  };
  select.addEventListener("change", show);
  show();
}

const data = document.getElementById("monitor-data");
if (data?.textContent) draw(JSON.parse(data.textContent));
rangeForm();
const indicator = document.getElementById("monitor-live");
const query = new URLSearchParams(location.search);
if (indicator && !query.has("from") && !query.has("to")) {
  keepCurrent({ query, indicator, onStats: draw }); // a named range ends now: keep it so
}
