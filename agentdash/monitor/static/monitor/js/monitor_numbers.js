/**
 * The Monitor's numbers as text — the totals' cards and the tables beside the charts — drawn
 * again from a new read of /monitor/stats.json while the page is live (the server drew them
 * first, with the page). Text only, through `el` and `textContent`.
 *
 * @module monitor/monitor_numbers
 */

import { el, replaceChildren } from "../../core/js/dom.js";

/** @param {number|null|undefined} n @param {number} digits */
function fixed(n, digits) {
  return n === null || n === undefined ? "—" : n.toFixed(digits);
}

/** @param {number|null|undefined} n a count, with thousands marked as the server's 0g does */
function grouped(n) {
  return (n || 0).toLocaleString("en-US");
}

/** @param {Record<string, number>|undefined} counts @param {string} between @param {string} none */
function counted(counts, between, none) {
  const parts = Object.entries(counts || {}).map(([name, n]) => `${n} ${name}`);
  return parts.length ? parts.join(between) : none;
}

/**
 * A table's row: its first cell the bucket or a name (a name in code, for the tables with
 * labels: they stack on a phone), the others numbers but those of ``plain``.
 *
 * @param {(string|number)[]} cells @param {string[]} [labels] @param {number[]} [plain]
 */
function row(cells, labels = [], plain = [0]) {
  return el("tr", {
    children: cells.map((value, i) => {
      const text = String(value);
      return el("td", {
        class: plain.includes(i) ? null : "num",
        attrs: { "data-label": labels[i] || null },
        children: [i === 0 && labels.length ? el("code", { text }) : text],
      });
    }),
  });
}

/** @param {string} name @param {HTMLTableRowElement[]} rows */
function fill(name, rows) {
  const body = document.querySelector(`tbody[data-numbers="${name}"]`);
  if (body) replaceChildren(body, ...rows);
  const table = document.querySelector(`[data-table="${name}"]`);
  const empty = document.querySelector(`[data-empty="${name}"]`);
  if (table instanceof HTMLElement) table.hidden = rows.length === 0;
  if (empty instanceof HTMLElement) empty.hidden = rows.length > 0;
}

/** @param {string} selector @param {string} text */
function say(selector, text) {
  const node = document.querySelector(selector);
  if (node) node.textContent = text;
}

/**
 * The totals and every table of ``stats``, as the page first showed them.
 *
 * @param {any} stats the document of /monitor/stats.json
 */
export function drawNumbers(stats) {
  const t = stats.totals || {};
  say("[data-stat=runs]", String(t.runs ?? 0));
  say("[data-note=runs]", counted(t.runs_by_status, " · ", "none"));
  say("[data-stat=error_rate]", t.error_rate === null || t.error_rate === undefined ? "—" : `${Math.round(t.error_rate * 100)} %`);
  say("[data-stat=run_p95]", t.run_seconds?.p95 == null ? "—" : `${fixed(t.run_seconds.p95, 1)} s`);
  say("[data-note=run_seconds]", `p50 ${fixed(t.run_seconds?.p50, 1)} s · p99 ${fixed(t.run_seconds?.p99, 1)} s`);
  say("[data-stat=model_calls]", String(t.model_calls ?? 0));
  say("[data-note=tokens]", `${grouped(t.tokens_in)} in · ${grouped(t.tokens_out)} out tokens`);
  say("[data-stat=tool_calls]", String(t.tool_calls ?? 0));
  say("[data-note=tool_errors]", `${t.tool_errors ?? 0} failed`);
  say("[data-stat=cost]", `$${fixed(t.cost_usd || 0, 2)}`);
  say("[data-note=unpriced]", t.unpriced_calls ? `${t.unpriced_calls} calls of models with no price` : "at today's prices");
  say("[data-stat=wait_p95]", t.wait_seconds?.p95 == null ? "—" : `${fixed(t.wait_seconds.p95, 0)} s`);
  say("[data-note=confirmations]", counted(t.confirmations, " · ", "no confirmation asked"));

  const buckets = (stats.series || []).filter(
    (/** @type {any} */ b) => b.runs || b.model_calls || b.tool_calls || Object.keys(b.confirmations || {}).length,
  );
  fill("series", buckets.map((/** @type {any} */ b) => row([
    b.t.slice(0, 16), b.runs, b.runs_by_status?.failed || 0, b.model_calls,
    fixed(b.model_seconds?.p95, 2), fixed(b.first_token_seconds?.p95, 2), grouped(b.tokens_in),
    grouped(b.tokens_out), fixed(b.cost_usd || 0, 4), b.tool_calls, b.tool_errors,
    counted(b.confirmations, ", ", "0"), fixed(b.wait_seconds?.p95, 1),
  ])));
  const series = document.querySelector('tbody[data-numbers="series"]');
  if (series && !(stats.series || []).length) {
    replaceChildren(series, el("tr", { children: [el("td", { text: "Nothing in this range.", class: "muted", attrs: { colspan: 13 } })] }));
  }
  fill("tools", (stats.tools || []).map((/** @type {any} */ r) => row([r.name, r.calls, r.errors], ["", "Calls", "Errors"])));
  fill("guardrails", (stats.guardrails || []).map((/** @type {any} */ r) =>
    row([r.guardrail, r.decision, r.count], ["", "Decision", "Times"], [0, 1])));
  fill("models", (stats.models || []).map((/** @type {any} */ r) =>
    row([r.name, r.calls, r.errors, grouped(r.tokens_in), grouped(r.tokens_out)], ["", "Calls", "Errors", "In", "Out"])));
}
