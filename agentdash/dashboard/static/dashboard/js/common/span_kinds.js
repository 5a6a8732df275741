/**
 * The kinds of span, as the pages show them: the one registry in the browser. The kinds and
 * the name prefixes that imply them are the runtime's (`runtime.telemetry.attributes.StepKind`;
 * a test holds this file to it), each with the label its badge shows and the colour it is
 * drawn in (a CSS variable of the theme, `--c-<colour>` and `--c-<colour>-bg`).
 *
 * @module dashboard/span_kinds
 */

/**
 * @typedef {object} KindLook
 * @property {string} label what its badge says
 * @property {string} colour the theme's colour: `--c-<colour>` (and `-bg` behind a badge)
 */

/** @type {ReadonlyMap<string, KindLook>} ours, in the runtime's order */
export const SPAN_KINDS = new Map([
  ["invocation", { label: "run", colour: "run" }],
  ["agent", { label: "agent", colour: "agent" }],
  ["model", { label: "model", colour: "model" }],
  ["tool", { label: "tool", colour: "tool" }],
  ["callback", { label: "callback", colour: "callback" }],
]);
/** What a span of no kind of ours is shown as. */
export const OTHER = { label: "other", colour: "run" };
/** @type {ReadonlyArray<readonly [string, string]>} a span's name prefix → its kind */
export const NAME_KINDS = [
  ["invoke_agent", "agent"],
  ["generate_content", "model"],
  ["execute_tool", "tool"],
  ["callback", "callback"],
];

/**
 * Our kind of a span: its `agentdash.span.kind`, else guessed from the operation its name
 * starts with, else "" (the server's `span_kind_of` does the same).
 *
 * @param {unknown} attribute
 * @param {string} name
 * @returns {string}
 */
export function kindOf(attribute, name) {
  if (typeof attribute === "string" && SPAN_KINDS.has(attribute)) return attribute;
  for (const [prefix, kind] of NAME_KINDS) if (name.startsWith(prefix)) return kind;
  return "";
}

/**
 * How a kind is shown ("" or an unknown kind: as other).
 *
 * @param {string} kind
 * @returns {KindLook}
 */
export function kindLook(kind) {
  return SPAN_KINDS.get(kind) ?? OTHER;
}
