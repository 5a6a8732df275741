/**
 * What a span sent from outside carries beyond its attributes: who sent it (its OTLP
 * resource and instrumentation scope), its links to other spans (a link to a stored span the
 * reader may see opens it), and its flags, trace state and the sender's dropped counts. The
 * runtime's own spans have none of these, and get no section. All of it is untrusted text:
 * textContent only; a link's address is the server's own path, never the sender's.
 *
 * @module dashboard/span_detail_source
 */

import { el } from "../../../core/js/dom.js";
import { formatCount } from "../common/format.js";
import { attributesTable, plainTable } from "./span_detail_tables.js";

const SAMPLED = 0x01;
const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;

/**
 * The sections for `data` (a span's full data), in the order a reader wants them: its links,
 * then who sent it.
 *
 * @param {Record<string, any>} data
 * @param {Set<string>} expanded the value blocks the reader expanded
 * @returns {HTMLElement[]}
 */
export function sourceSections(data, expanded) {
  const otlp = isMap(data.otlp) ? data.otlp : {};
  const links = Array.isArray(data.links) ? data.links : Array.isArray(otlp.links) ? otlp.links : [];
  /** @type {HTMLElement[]} */
  const found = [];
  if (links.length) found.push(linksSection(links, otlp.droppedLinksCount, expanded));
  if (isMap(data.source)) found.push(senderSection(data.source, otlp, expanded));
  return found;
}

/** @param {any[]} links @param {unknown} dropped @param {Set<string>} expanded */
function linksSection(links, dropped, expanded) {
  const items = links.filter(isMap).map((link, i) => {
    const target = `${String(link.traceId || "")} / ${String(link.spanId || "")}`;
    const url = typeof link.url === "string" && link.url.startsWith("/") && !link.url.startsWith("//") ? link.url : "";
    /** @type {Node[]} */
    const parts = [];
    if (url) {
      const anchor = el("a", { class: "mono", text: target, attrs: { href: url, "data-focus": `link:${i}` } });
      anchor.addEventListener("click", (event) => openHere(event, url));
      parts.push(anchor);
    } else {
      parts.push(el("span", { class: "mono", text: target }), el("span", { class: "muted", text: " (not stored here)" }));
    }
    /** @type {[string, unknown][]} */
    const facts = [];
    if (link.traceState) facts.push(["trace state", link.traceState]);
    if (link.flags) facts.push(["flags", flagsText(link.flags)]);
    if (link.droppedAttributesCount) facts.push(["attributes dropped by the sender", link.droppedAttributesCount]);
    if (facts.length) parts.push(plainTable(facts, `link ${i + 1}`));
    if (isMap(link.attributes) && Object.keys(link.attributes).length) {
      parts.push(attributesTable(link.attributes, expanded, { label: `link ${i + 1} attributes`, prefix: `link:${i}` }));
    }
    return el("li", { children: parts });
  });
  const title = `Links (${formatCount(items.length)}${dropped ? `, ${formatCount(Number(dropped))} dropped by the sender` : ""})`;
  return el("section", {
    class: "detail-links",
    children: [el("h4", { text: title }), el("ul", { class: "span-links", children: items })],
  });
}

/** @param {Record<string, any>} source @param {Record<string, any>} otlp @param {Set<string>} expanded */
function senderSection(source, otlp, expanded) {
  const resource = isMap(source.resource) ? source.resource : {};
  const scope = isMap(source.scope) ? source.scope : {};
  const resourceAttrs = isMap(resource.attributes) ? resource.attributes : {};
  /** @type {[string, unknown][]} */
  const scopeRows = [
    ["name", scope.name || "—"],
    ["version", scope.version || "—"],
  ];
  if (scope.schemaUrl) scopeRows.push(["schema URL", scope.schemaUrl]);
  if (scope.droppedAttributesCount) scopeRows.push(["attributes dropped by the sender", scope.droppedAttributesCount]);
  /** @type {[string, unknown][]} */
  const resourceRows = [];
  if (resource.schemaUrl) resourceRows.push(["schema URL", resource.schemaUrl]);
  if (resource.droppedAttributesCount) resourceRows.push(["attributes dropped by the sender", resource.droppedAttributesCount]);
  /** @type {[string, unknown][]} */
  const spanRows = [];
  if (otlp.flags !== undefined) spanRows.push(["flags", flagsText(otlp.flags)]);
  if (otlp.traceState) spanRows.push(["trace state", otlp.traceState]);
  for (const [key, label] of [
    ["droppedAttributesCount", "attributes dropped by the sender"],
    ["droppedEventsCount", "events dropped by the sender"],
  ]) {
    if (otlp[key]) spanRows.push([label, otlp[key]]);
  }
  const service = typeof resourceAttrs["service.name"] === "string" ? resourceAttrs["service.name"] : "";
  const summary = el("summary", {
    text: `Sent by ${service || "an unnamed service"}${scope.name ? ` · ${scope.name}` : ""}`,
    attrs: { "data-focus": "sender" },
  });
  /** @type {Node[]} */
  const children = [summary];
  if (spanRows.length) children.push(el("h5", { text: "Span" }), plainTable(spanRows, "span as sent"));
  children.push(
    el("h5", { text: `Resource (${formatCount(Object.keys(resourceAttrs).length)})` }),
    attributesTable(resourceAttrs, expanded, { label: "resource attributes", prefix: "resource" }),
  );
  if (resourceRows.length) children.push(plainTable(resourceRows, "resource"));
  children.push(el("h5", { text: "Instrumentation scope" }), plainTable(scopeRows, "instrumentation scope"));
  if (isMap(scope.attributes) && Object.keys(scope.attributes).length) {
    children.push(attributesTable(scope.attributes, expanded, { label: "scope attributes", prefix: "scope" }));
  }
  return el("details", { class: "raw-attrs detail-sender", children });
}

/**
 * OTLP span flags in words: the W3C trace flags (bit 0: sampled) and whether the parent
 * was remote (bits 8 and 9).
 *
 * @param {unknown} flags
 * @returns {string}
 */
export function flagsText(flags) {
  const n = Number(flags);
  if (!Number.isInteger(n) || n < 0) return String(flags);
  const words = [n & SAMPLED ? "sampled" : "not sampled"];
  if (n & HAS_IS_REMOTE) words.push(n & IS_REMOTE ? "remote parent" : "local parent");
  return `0x${n.toString(16).padStart(4, "0")} (${words.join(", ")})`;
}

/**
 * A link to a span of this very page opens it without leaving the page (the address
 * changes as a selection changes it, so back returns); another page's is followed.
 *
 * @param {MouseEvent} event
 * @param {string} url
 */
function openHere(event, url) {
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const target = new URL(url, location.href);
  if (target.pathname !== location.pathname) return;
  event.preventDefault();
  history.pushState(null, "", target);
  dispatchEvent(new PopStateEvent("popstate"));
}

/** @param {unknown} value @returns {value is Record<string, any>} */
function isMap(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
