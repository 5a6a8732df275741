/**
 * The span details pane's tables: the span's identity and timing, its raw attributes (every
 * value collapsible, so a huge one never floods the page) and its events.
 *
 * @module dashboard/span_detail_tables
 */

import { el } from "../../../core/js/dom.js";
import { valueBlock } from "./span_detail_value.js";

/**
 * Short texts, one per row (the span's identity and timing).
 *
 * @param {Array<[string, unknown]>} rows
 * @param {string} label the table's accessible name
 * @returns {HTMLTableElement}
 */
export function plainTable(rows, label) {
  return /** @type {HTMLTableElement} */ (
    el("table", {
      class: "kv",
      attrs: { "aria-label": label },
      children: [
        el("tbody", {
          children: rows.map(([key, value]) =>
            el("tr", {
              children: [
                el("th", { text: key, attrs: { scope: "row" } }),
                el("td", { children: [el("span", { class: "kv-value", text: String(value ?? "") })] }),
              ],
            }),
          ),
        }),
      ],
    })
  );
}

/**
 * The raw attributes, sorted by key, labelled "attributes"; values that are not strings are
 * shown as JSON, long ones collapsed.
 *
 * @param {Record<string, unknown>} attrs
 * @param {Set<string>} expanded the value blocks the reader expanded
 * @param {{label?: string, prefix?: string}} [options] the table's accessible name; its
 *   value blocks' keys in `expanded` start with `prefix:`
 * @returns {HTMLTableElement}
 */
export function attributesTable(attrs, expanded, { label = "attributes", prefix = "raw" } = {}) {
  const entries = Object.entries(attrs).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (!entries.length) {
    return /** @type {HTMLTableElement} */ (
      el("table", { class: "kv", attrs: { "aria-label": label }, children: [el("caption", { class: "muted", text: "None." })] })
    );
  }
  return /** @type {HTMLTableElement} */ (
    el("table", {
      class: "kv",
      attrs: { "aria-label": label },
      children: [
        el("tbody", {
          children: entries.map(([key, value]) =>
            el("tr", {
              children: [
                el("th", { text: key, attrs: { scope: "row" } }),
                el("td", { children: [valueBlock(value ?? "", { key: `${prefix}:${key}`, expanded, mono: true })] }),
              ],
            }),
          ),
        }),
      ],
    })
  );
}

/**
 * The span's events (exceptions, logs), if any: a heading and a list.
 *
 * @param {unknown} events
 * @param {Set<string>} expanded
 * @returns {HTMLElement[]}
 */
export function eventsList(events, expanded) {
  if (!Array.isArray(events) || !events.length) return [];
  return [
    el("h4", { text: "Events" }),
    el("ul", {
      class: "span-events",
      children: events.map((event, i) =>
        el("li", {
          children: [
            el("strong", { text: String((event && event.name) || "event") }),
            valueBlock((event && event.attributes) || {}, { key: `event:${i}`, expanded, mono: true }),
          ],
        }),
      ),
    }),
  ];
}
