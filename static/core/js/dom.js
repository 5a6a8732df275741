/**
 * The tiny DOM helpers every page script uses (STYLE rule 11).
 *
 * Untrusted text (model output, tool results, user input, span attributes) reaches the page
 * only through `textContent`, `createElement` and `setAttribute` on names fixed in our code.
 * The single exception is {@link setSanitizedHtml}: THE one HTML sink of the codebase, for
 * `html` fields produced by the server's sanitizer and for nothing else. No other file may turn
 * a string into markup in any way (a test scans static/ for every such sink).
 *
 * @module core/dom
 */

const FORBIDDEN_ATTRIBUTE = /^(on|style$|srcdoc$|formaction$)/i;
const UNSAFE_URL = /^\s*(javascript|data|vbscript):/i;
const URL_ATTRIBUTES = new Set(["href", "src", "action", "xlink:href"]);

/**
 * @typedef {object} ElOptions
 * @property {string|null} [class] space-separated class names (none when empty or null)
 * @property {string|number} [text] text content (set with textContent: never parsed as HTML)
 * @property {Record<string, string|number|boolean|null|undefined>} [attrs] attributes, by names
 *   fixed in the calling code; `false`/`null`/`undefined` values are skipped, `true` sets "".
 * @property {Array<Node|string|null|undefined|false>} [children] appended in order; strings
 *   become text nodes
 */

/**
 * @template {string} K
 * @typedef {K extends keyof HTMLElementTagNameMap ? HTMLElementTagNameMap[K] : HTMLElement} ElementOf
 *   the element a tag name makes (`el("button")` is an HTMLButtonElement)
 */

/**
 * Create an element safely.
 *
 * @template {string} K
 * @param {K} tag
 * @param {ElOptions} [options]
 * @returns {ElementOf<K>}
 * @throws {Error} for an event-handler, `style` or `srcdoc` attribute, or a script URL
 */
export function el(tag, options = {}) {
  const node = document.createElement(tag);
  if (options.class) node.className = options.class;
  if (options.text !== undefined && options.text !== null) node.textContent = String(options.text);
  for (const [name, value] of Object.entries(options.attrs || {})) {
    if (value === false || value === null || value === undefined) continue;
    setAttr(node, name, value === true ? "" : String(value));
  }
  for (const child of options.children || []) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child);
  }
  return /** @type {ElementOf<K>} */ (node);
}

/**
 * `setAttribute`, refusing the names that run code or bypass the stylesheet.
 *
 * @param {Element} node
 * @param {string} name a name fixed in the calling code
 * @param {string} value
 */
export function setAttr(node, name, value) {
  if (FORBIDDEN_ATTRIBUTE.test(name)) throw new Error(`refusing to set the ${name} attribute`);
  if (URL_ATTRIBUTES.has(name.toLowerCase()) && UNSAFE_URL.test(value)) {
    throw new Error(`refusing a script URL in ${name}`);
  }
  node.setAttribute(name, value);
}

/**
 * Replace an element's children with the given nodes (or nothing).
 *
 * @param {Element} node
 * @param {...(Node|string)} children
 */
export function replaceChildren(node, ...children) {
  node.replaceChildren(...children);
}

/**
 * THE ONE HTML SINK. Insert HTML that the server's sanitizer produced
 * (agentdash.core.rendering: markdown without raw HTML, then nh3 with a strict allowlist),
 * i.e. the `html` field of a stored event as sent over the live protocol.
 *
 * Never pass anything else: not user input, not streamed partial text, not span attributes,
 * not error messages. Those go through `textContent` ({@link el} with `text`).
 *
 * @param {Element} element the container; its previous children are replaced
 * @param {string|undefined} html sanitized HTML from the server (none: the element is emptied)
 */
export function setSanitizedHtml(element, html) {
  element.innerHTML = typeof html === "string" ? html : "";
}

/**
 * The JSON a page passes with Django's `json_script`.
 *
 * @param {string} id the element id given to json_script
 * @returns {any}
 * @throws {Error} when the element is missing
 */
export function readJsonScript(id) {
  const node = document.getElementById(id);
  if (!node) throw new Error(`no json_script element #${id}`);
  return JSON.parse(node.textContent || "null");
}
