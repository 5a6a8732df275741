// dashboard/chat_render.js: how a stored event's tool calls and results are labelled. The module
// builds DOM nodes, so a few-line stand-in for `document` is enough: these tests read the
// labels and names the blocks were given, not how a browser lays them out.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import "./static_tree.mjs";

// After static_tree.mjs has run: chat_render.js imports core/js/dom.js from the merged tree.
const { renderEvent } = await import("../../agentdash/dashboard/static/dashboard/js/chat/chat_render.js");

/** Just what `el()` and the tool blocks use of an element. */
class FakeElement {
  /** @param {string} tag */
  constructor(tag) {
    this.tag = tag;
    this.className = "";
    this.own = "";
    this.children = [];
    this.attributes = {};
    this.dataset = {};
    this.classList = { add: (name) => (this.className = `${this.className} ${name}`.trim()) };
  }

  setAttribute(name, value) {
    this.attributes[name] = value;
  }

  append(...nodes) {
    for (const node of nodes) this.children.push(typeof node === "string" ? { textContent: node } : node);
  }

  set textContent(text) {
    this.own = text;
    this.children = [];
  }

  get textContent() {
    return this.own + this.children.map((child) => child.textContent).join("");
  }
}

globalThis.document = /** @type {any} */ ({ createElement: (tag) => new FakeElement(tag) });

/** The first element under `node` (itself included) with the class `name`, or null. */
function find(node, name) {
  if (!(node instanceof FakeElement)) return null;
  if (node.className.split(" ").includes(name)) return node;
  for (const child of node.children) {
    const found = find(child, name);
    if (found) return found;
  }
  return null;
}

/** A tool block's label and tool name ("" when it shows none). */
function block(node) {
  return { label: find(node, "tool-tag")?.textContent, name: find(node, "tool-name")?.textContent ?? "" };
}

/** A stored agent event holding one call to `name` and its result. */
function event(name, args = { q: 1 }) {
  return {
    id: "e1",
    invocation_id: "i1",
    author: "agent",
    timestamp: 0,
    function_calls: [{ id: "c1", name, args }],
    function_responses: [{ id: "c1", name, response: { ok: true } }],
  };
}

describe("renderEvent: tool calls and results", () => {
  test("a tool's call and result are labelled call and result, with its name", () => {
    const [call, result] = renderEvent(event("lookup"), false).children;
    assert.deepEqual(block(call), { label: "call", name: "lookup" });
    assert.deepEqual(block(result), { label: "result", name: "lookup" });
  });

  // The runtime's own calls were looked up in a plain object: an inherited name (its
  // prototype's toString, constructor, …) was taken for one of them, and labelled undefined.
  test("a tool named like an object's inherited property is a tool like any", () => {
    for (const name of ["toString", "constructor", "__proto__", "hasOwnProperty", "valueOf"]) {
      const [call, result] = renderEvent(event(name), false).children;
      assert.deepEqual(block(call), { label: "call", name }, name);
      assert.deepEqual(block(result), { label: "result", name }, name);
    }
  });

  test("the runtime asking the person: labelled by what it asks, about which call", () => {
    const args = { originalFunctionCall: { name: "transfer" }, toolConfirmation: { hint: "sure?" } };
    const [call, result] = renderEvent(event("adk_request_confirmation", args), false).children;
    assert.deepEqual(block(call), { label: "approval asked", name: "transfer" });
    assert.deepEqual(block(result), { label: "approval answer", name: "" });
    const [asked, given] = renderEvent(event("adk_request_credential", { function_call_id: "c0" }), false).children;
    assert.deepEqual(block(asked), { label: "credential asked", name: "c0" });
    assert.deepEqual(block(given), { label: "credential", name: "" });
  });
});
