/**
 * The Monitor's charts as shapes, from the numbers alone (no DOM): a nice top for the axis,
 * stacked bars, lines with gaps where a bucket has no value. Drawn by monitor.js; tested by
 * tests/js/test_chart_model.mjs.
 *
 * @module monitor/chart_model
 */

/** Chart area, in the SVG's own units. */
export const WIDTH = 600;
export const HEIGHT = 180;

/**
 * The axis' top: the largest value rounded up to 1, 2 or 5 times a power of ten (1 for none).
 *
 * @param {number} largest
 * @returns {number}
 */
export function niceTop(largest) {
  if (!(largest > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(largest));
  for (const step of [1, 2, 5, 10]) {
    if (largest <= step * power) return step * power;
  }
  return 10 * power;
}

/**
 * Stacked bars, one per bucket: for each bucket, a rectangle per part with a value.
 *
 * @param {number[][]} parts per bucket, the value of each part (stacked in this order)
 * @param {number} top the axis' top
 * @returns {{bucket: number, part: number, x: number, y: number, width: number, height: number, value: number}[]}
 */
export function stackedBars(parts, top) {
  const count = parts.length || 1;
  const slot = WIDTH / count;
  const width = Math.max(1, slot * 0.8);
  /** @type {{bucket: number, part: number, x: number, y: number, width: number, height: number, value: number}[]} */
  const shapes = [];
  for (let bucket = 0; bucket < parts.length; bucket += 1) {
    let base = HEIGHT;
    parts[bucket].forEach((value, part) => {
      if (!(value > 0)) return;
      const height = (value / top) * HEIGHT;
      base -= height;
      shapes.push({ bucket, part, x: bucket * slot + (slot - width) / 2, y: base, width, height, value });
    });
  }
  return shapes;
}

/**
 * A line through the buckets that have a value, as polyline runs (a bucket without one ends
 * a run: no line is drawn across it).
 *
 * @param {(number|null)[]} values
 * @param {number} top
 * @returns {string[]} each run's points, "x,y x,y …"
 */
export function lineRuns(values, top) {
  const count = values.length || 1;
  const slot = WIDTH / count;
  /** @type {string[]} */
  const runs = [];
  /** @type {string[]} */
  let points = [];
  values.forEach((value, bucket) => {
    if (value === null || value === undefined || Number.isNaN(value)) {
      if (points.length) runs.push(points.join(" "));
      points = [];
      return;
    }
    const x = bucket * slot + slot / 2;
    const y = HEIGHT - (value / top) * HEIGHT;
    points.push(`${round(x)},${round(y)}`);
  });
  if (points.length) runs.push(points.join(" "));
  return runs;
}

/** @param {number} n */
function round(n) {
  return Math.round(n * 100) / 100;
}

/**
 * Where a bar of the runs chart leads: the sessions list, narrowed to the sessions with a run
 * created in the bucket (of that outcome), and to the chart's agent and owner.
 *
 * @param {string} startIso the bucket's start
 * @param {number} stepSeconds its length
 * @param {{agent?: string, owner?: string}} filters the chart's
 * @param {string} outcome a run's status ("" for any)
 * @returns {string}
 */
export function drillHref(startIso, stepSeconds, filters, outcome) {
  const params = windowParams("runs", startIso, stepSeconds, filters);
  if (outcome) params.set("outcome", outcome);
  return `/?${params}`;
}

/**
 * Where a bar or point of a chart of steps leads: the sessions list, narrowed to the sessions
 * with such a step started in the bucket — a model or tool call (that failed), a guardrail
 * decision, a wait for a person — of the name given (a model, tool, decision or a wait's
 * outcome), and to the chart's agent and owner. Their links open the timeline's find bar on
 * those steps.
 *
 * @param {string} startIso @param {number} stepSeconds
 * @param {{agent?: string, owner?: string}} filters
 * @param {"model"|"model_error"|"tool"|"tool_error"|"decision"|"wait"} step
 * @param {string} [name]
 * @returns {string}
 */
export function stepsHref(startIso, stepSeconds, filters, step, name = "") {
  const params = windowParams("steps", startIso, stepSeconds, filters);
  params.set("step", step);
  if (name) params.set("step_name", name);
  return `/?${params}`;
}

/**
 * Where a point of the scores chart leads: the sessions list, narrowed to the sessions given
 * a score in the bucket — of the name given (the chart's one name), else of any — and to the
 * chart's agent and owner.
 *
 * @param {string} startIso @param {number} stepSeconds
 * @param {{agent?: string, owner?: string}} filters
 * @param {string} [name]
 * @returns {string}
 */
export function scoresHref(startIso, stepSeconds, filters, name = "") {
  const params = windowParams("scores", startIso, stepSeconds, filters);
  if (name) params.set("score", name);
  return `/?${params}`;
}

/**
 * @param {string} prefix @param {string} startIso @param {number} stepSeconds
 * @param {{agent?: string, owner?: string}} filters
 */
function windowParams(prefix, startIso, stepSeconds, filters) {
  const start = new Date(startIso);
  const end = new Date(start.getTime() + stepSeconds * 1000);
  const params = new URLSearchParams({ [`${prefix}_from`]: start.toISOString(), [`${prefix}_to`]: end.toISOString() });
  if (filters.agent) params.set("agent", filters.agent);
  if (filters.owner) params.set("owner", filters.owner);
  return params;
}
