/**
 * The Monitor page's charts, drawn as SVG from the page's own numbers (its JSON script, the
 * same document as /monitor/stats.json) with DOM calls only; colours from the theme's CSS
 * classes. Each bar and point has a title with its bucket and value; the numbers are also in
 * the table under the charts.
 *
 * @module monitor/monitor
 */

import { HEIGHT, WIDTH, drillHref, lineRuns, niceTop, scoresHref, stackedBars, stepsHref } from "./chart_model.js";
import { keepCurrent } from "./monitor_live.js";
import { drawNumbers } from "./monitor_numbers.js";

const SVG = "http://www.w3.org/2000/svg";
const STATUSES = ["succeeded", "failed", "cancelled", "waiting", "running", "queued"];
const DECISIONS = ["allowed", "redacted", "limit", "blocked", "unsafe"];
const ANSWERS = ["approve", "deny", "expired", "step", "cancel", "abandoned", "ended", "waiting"];
const QUANTILES = ["p50", "p95", "p99"];
/** @type {Record<string, string>} what a part is called where its key's name would not do */
/** @type {Record<string, string>} */
const LABELS = { cached: "in, cached", thinking: "out, thinking", expired: "no answer in time" };

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
    item.textContent = LABELS[part] || part;
    list.append(item);
  }
  figure.append(list);
}

/**
 * @param {HTMLElement|undefined} figure @param {any[]} series @param {string[]} parts
 * @param {(bucket: any, part: string) => number} value @param {string} unit
 * @param {((bucket: any, part: string) => string) | null} [link] where a bar leads
 */
function bars(figure, series, parts, value, unit, link = null) {
  if (!figure) return;
  const values = series.map((b) => parts.map((p) => value(b, p)));
  const top = niceTop(Math.max(0, ...values.map((v) => v.reduce((a, n) => a + n, 0))));
  const plot = frame(figure, top, unit);
  for (const shape of stackedBars(values, top)) {
    const bucket = series[shape.bucket];
    const rect = svg("rect", {
      x: shape.x, y: shape.y, width: shape.width, height: shape.height,
      class: `bar part-${parts[shape.part]}`, "data-value": shape.value,
    });
    const part = parts[shape.part];
    const label = `${when(bucket.t)}: ${+shape.value.toPrecision(6)}${unit} ${LABELS[part] || part}`;
    plot.append(linked(rect, label, link && link(bucket, part)));
  }
  const shown = parts.filter((_, i) => values.some((v) => v[i] > 0));
  if (shown.length) legend(figure, shown);
  else empty(figure);
}

/**
 * A shape with its title, in a link to the sessions behind it when it has one.
 *
 * @param {SVGElement} shape @param {string} label @param {string|null} href
 * @returns {SVGElement}
 */
function linked(shape, label, href) {
  if (!href) return titled(shape, label);
  const anchor = svg("a", { href, class: "bar-link" });
  anchor.setAttribute("aria-label", `${label}: the sessions`);
  anchor.append(titled(shape, `${label} (open the sessions)`));
  return anchor;
}

/** @param {HTMLElement} figure */
function empty(figure) {
  const note = document.createElement("p");
  note.className = "muted small chart-empty";
  note.textContent = "Nothing in this range.";
  figure.append(note);
}

/**
 * @param {HTMLElement|undefined} figure @param {any[]} series @param {string[]} names
 * @param {(bucket: any, name: string) => number|null} value @param {string} unit
 * @param {((bucket: any) => string) | null} [link] where a bucket leads
 */
function lines(figure, series, names, value, unit, link = null) {
  if (!figure) return;
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
  // reads them; it leads to the sessions behind them.
  const slot = WIDTH / (series.length || 1);
  series.forEach((bucket, i) => {
    const known = names.filter((n) => value(bucket, n) !== null);
    if (!known.length) return;
    const text = known.map((n) => `${n} ${value(bucket, n)}${unit}`).join(", ");
    const column = svg("rect", { x: i * slot, y: 0, width: slot, height: HEIGHT, class: "hover-column" });
    plot.append(linked(column, `${when(bucket.t)}: ${text}`, link && link(bucket)));
  });
  if (all.length) legend(figure, names);
  else empty(figure);
}

/**
 * Every chart of ``stats`` (what was drawn before is cleared).
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
  /** @param {"model"|"model_error"|"tool"|"tool_error"|"decision"|"wait"} kind @param {string} [name] */
  const to = (kind, name = "") => (/** @type {any} */ b) => stepsHref(b.t, step, filters, kind, name);
  const models = to("model", filters.model || "");
  const quantile = (/** @type {string} */ key) => (/** @type {any} */ b, /** @type {string} */ p) => b[key]?.[p] ?? null;
  bars(figures.runs, series, STATUSES, (b, s) => b.runs_by_status?.[s] || 0, "",
    (b, s) => drillHref(b.t, step, filters, s));
  lines(figures.run_seconds, series, QUANTILES, quantile("run_seconds"), " s", (b) => drillHref(b.t, step, filters, ""));
  lines(figures.model, series, QUANTILES, quantile("model_seconds"), " s", models);
  lines(figures.first_token, series, QUANTILES, quantile("first_token_seconds"), " s", models);
  lines(figures.tool_seconds, series, QUANTILES, quantile("tool_seconds"), " s", to("tool", filters.tool || ""));
  /** @type {Record<string, (b: any) => number>} */
  const tokens = {
    in: (b) => b.tokens_in - b.tokens_cached, cached: (b) => b.tokens_cached,
    out: (b) => b.tokens_out - b.tokens_thinking, thinking: (b) => b.tokens_thinking,
  };
  bars(figures.tokens, series, Object.keys(tokens), (b, p) => Math.max(0, tokens[p](b) || 0), "", models);
  bars(figures.cost, series, ["cost"], (b) => b.cost_usd || 0, " $", models);
  bars(figures.tools, series, ["ok", "errors"], (b, p) => (p === "ok" ? b.tool_calls - b.tool_errors : b.tool_errors) || 0, "",
    (b, p) => to(p === "ok" ? "tool" : "tool_error", filters.tool || "")(b));
  bars(figures.decisions, series, DECISIONS, (b, d) => b.decisions?.[d] || 0, "", (b, d) => to("decision", d)(b));
  bars(figures.confirmations, series, ANSWERS, (b, a) => b.confirmations?.[a] || 0, "", (b, a) => to("wait", a)(b));
  lines(figures.waits, series, QUANTILES, quantile("wait_seconds"), " s", to("wait"));
  // Scores: each name's share of its best (yes; a number's top), as a line in %.
  const scored = /** @type {string[]} */ (stats.score_names || []);
  const slots = scored.map((name, i) => {
    LABELS[`score${i}`] = name;
    return `score${i}`;
  });
  // A bucket leads to the sessions scored in it (of the one name charted; else of any).
  const one = scored.length === 1 ? scored[0] : "";
  lines(figures.scores, series, slots, (b, slot) => {
    const share = b.scores?.[scored[slots.indexOf(slot)]]?.share;
    return share === null || share === undefined ? null : Math.round(share * 100);
  }, " %", (b) => scoresHref(b.t, step, filters, one));
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
  // A named range ends now: keep it so, charts and numbers.
  keepCurrent({ query, indicator, onStats: (stats) => { draw(stats); drawNumbers(stats); } });
}
