/**
 * Tokens and cost for people: a model call's, a run's, the session's — as the server counts
 * and prices them (docs/PROTOCOL.md, "usage"): nothing is priced here. And the session's
 * total, kept current as runs change.
 *
 * @module dashboard/usage
 */

import { formatCost, formatCount } from "./format.js";

/**
 * @typedef {object} Usage  a `usage` object: a span's, or totals (a run's, the session's)
 * @property {number|null} input
 * @property {number|null} output
 * @property {number|null} [cached]
 * @property {number|null} [thinking]
 * @property {number|null} cost_usd null: no price
 * @property {number} [calls] totals only
 * @property {string[]} [unpriced] totals only: the models without a price
 * @property {string} [model] a span's only
 * @property {string|null} [price_as_of] a span's only
 */

const FIELDS = ["input", "output", "cached", "thinking"];

/**
 * Whether a value is a usage object worth showing (a model call, or totals with calls).
 *
 * @param {unknown} usage
 * @returns {usage is Usage}
 */
export function hasUsage(usage) {
  if (!usage || typeof usage !== "object") return false;
  const u = /** @type {Usage} */ (usage);
  if (typeof u.calls === "number") return u.calls > 0;
  return isCount(u.input) || isCount(u.output);
}

/** @param {unknown} n @returns {n is number} */
function isCount(n) {
  return typeof n === "number" && Number.isFinite(n);
}

/**
 * The cost as shown: "$0.001234", "—" without a price, "≥ $0.001234" when some calls'
 * models have no price (the cost of the others is a lower bound).
 *
 * @param {Usage} usage
 * @returns {string}
 */
export function costText(usage) {
  const partial = Array.isArray(usage.unpriced) && usage.unpriced.length > 0;
  const cost = formatCost(usage.cost_usd);
  return partial && cost !== "—" ? `≥ ${cost}` : cost;
}

/**
 * One line: "1,200 → 34 tok · $0.001234" (input → output tokens, then the cost).
 *
 * @param {Usage} usage
 * @returns {string}
 */
export function usageText(usage) {
  const tokens = `${isCount(usage.input) ? formatCount(usage.input) : "?"} → ${
    isCount(usage.output) ? formatCount(usage.output) : "?"
  } tok`;
  return `${tokens} · ${costText(usage)}`;
}

/**
 * The details, for a title: each count the model reported, the calls, the price's date, the
 * models without a price.
 *
 * @param {Usage} usage
 * @returns {string}
 */
export function usageTitle(usage) {
  const lines = [];
  if (isCount(usage.input)) {
    const cached = isCount(usage.cached) ? ` (${formatCount(usage.cached)} cached)` : "";
    lines.push(`input ${formatCount(usage.input)} tokens${cached}`);
  }
  if (isCount(usage.output)) {
    const thinking = isCount(usage.thinking) ? ` (${formatCount(usage.thinking)} thinking)` : "";
    lines.push(`output ${formatCount(usage.output)} tokens${thinking}`);
  }
  if (typeof usage.calls === "number") {
    lines.push(`${formatCount(usage.calls)} model call${usage.calls === 1 ? "" : "s"}`);
  }
  if (usage.cost_usd === null || usage.cost_usd === undefined) {
    lines.push("cost unknown: no price for this model");
  } else {
    lines.push(`cost ${formatCost(usage.cost_usd)}`);
  }
  if (typeof usage.model === "string" && usage.model) {
    const asOf = usage.price_as_of ? `, price as of ${usage.price_as_of}` : "";
    lines.push(`model ${usage.model}${asOf}`);
  }
  if (Array.isArray(usage.unpriced) && usage.unpriced.length) {
    const names = usage.unpriced.map((m) => (m ? String(m) : "(unnamed)")).join(", ");
    lines.push(`no price for: ${names} (not in the cost)`);
  }
  return lines.join("\n");
}

/**
 * The session's totals, kept current: what the snapshot said, less what it said of the
 * runs it sent, plus each run's latest totals (every field of totals but `unpriced` adds
 * up). The runs the snapshot did not send had ended (docs/PROTOCOL.md): their part stays as
 * read.
 */
export class SessionUsage {
  constructor() {
    /** @type {Record<string, number|null>|null} the snapshot's total less its runs' */
    this.rest = null;
    /** @type {Map<string, Usage>} each run's latest totals, by run id */
    this.runs = new Map();
    /** @type {string[]} the snapshot's models without a price */
    this.unpriced = [];
  }

  /**
   * The snapshot's totals and the runs it came with.
   *
   * @param {Usage|undefined} total
   * @param {{id: string|number, usage?: Usage}[]} runs
   */
  load(total, runs) {
    if (!total || typeof total !== "object") return;
    const rest = sums(total);
    for (const run of runs) {
      if (run && run.usage && typeof run.usage === "object") addTo(rest, sums(run.usage), -1);
    }
    this.rest = rest;
    this.unpriced = Array.isArray(total.unpriced) ? total.unpriced.map(String) : [];
    this.runs.clear();
    for (const run of runs) this.run(run);
  }

  /**
   * A run as last told (its `usage` may have grown).
   *
   * @param {{id: string|number, usage?: Usage}} run
   */
  run(run) {
    if (run && run.usage && typeof run.usage === "object") this.runs.set(String(run.id), run.usage);
  }

  /** @returns {Usage|null} the session's totals now (null before the snapshot) */
  get total() {
    if (!this.rest) return null;
    const sum = { ...this.rest };
    const unpriced = new Set(this.unpriced);
    for (const usage of this.runs.values()) {
      addTo(sum, sums(usage), 1);
      for (const model of Array.isArray(usage.unpriced) ? usage.unpriced : []) {
        unpriced.add(String(model));
      }
    }
    const calls = sum.calls ?? 0;
    return /** @type {Usage} */ ({
      ...sum,
      // Sums of floats, less and more: rounded to a millionth of a millionth of a dollar.
      cost_usd: calls > 0 && !sum.priced_calls ? null : Math.round((sum.cost_usd ?? 0) * 1e12) / 1e12,
      unpriced: [...unpriced].sort(),
    });
  }
}

const ADDITIVE = [...FIELDS, "calls", "priced_calls", "cost_usd"];

/**
 * @param {Record<string, unknown>} usage a {@link Usage}, read field by field
 * @returns {Record<string, number|null>} the additive fields of totals (null: not reported)
 */
function sums(usage) {
  /** @type {Record<string, number|null>} */
  const found = {};
  for (const name of ADDITIVE) found[name] = isCount(usage[name]) ? usage[name] : null;
  return found;
}

/**
 * `sum` += `sign` × `more`, field by field; a field neither reported stays null.
 *
 * @param {Record<string, number|null>} sum
 * @param {Record<string, number|null>} more
 * @param {1|-1} sign
 */
function addTo(sum, more, sign) {
  for (const name of ADDITIVE) {
    if (more[name] === null) continue;
    sum[name] = (sum[name] ?? 0) + sign * more[name];
  }
}
