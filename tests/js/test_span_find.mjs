// dashboard/span_find.js: which spans a filter matches, the ancestors kept for them, and the
// walk from match to match in tree order.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { SpanFind, emptyFilter, isActive } from "../../agentdash/dashboard/static/dashboard/js/timeline/span_find.js";
import { summaryOfChange } from "../../agentdash/dashboard/static/dashboard/js/common/span_summary.js";
import { SpanTree } from "../../agentdash/dashboard/static/dashboard/js/timeline/span_tree.js";

const MS = 1e6;

/**
 * The tree of the tests: a run with an agent calling a model and two tools, one failing, one
 * guarded by a callback.
 */
function sessionTree() {
  const tree = new SpanTree();
  // Each span as a live change brings it: the server's summary (the summary page's fields).
  const add = (id, parent, name, start, durationMs, fields = {}) =>
    tree.upsert(
      summaryOfChange({
        summary: {
          span_id: id, trace_id: "t", parent_span_id: parent, name, start_time: start,
          end_time: durationMs === null ? null : start + durationMs * MS, status: "ok", ...fields,
        },
      }),
      1,
    );
  add("run", null, "invocation", 0, 900, { span_kind: "invocation" });
  add("agent", "run", "invoke_agent helper", 1, 800, { span_kind: "agent", label: "helper" });
  add("model", "agent", "generate_content gemini", 2, 300, { span_kind: "model", label: "gemini" });
  add("tool1", "agent", "execute_tool lookup", 400 * MS, 5, { span_kind: "tool", label: "lookup", status: "error", status_message: "Table MISSING" });
  add("cb", "tool1", "callback before_tool", 401 * MS, 1, { span_kind: "callback", label: "guard", outcome: "overridden" });
  add("tool2", "agent", "execute_tool write_file", 500 * MS, 50, { span_kind: "tool", label: "write_file" });
  return tree;
}

const ids = (nodes) => nodes.map((node) => node.id);

/** A filter with some fields set. */
const filter = (fields) => ({ ...emptyFilter(), ...fields });

describe("filters", () => {
  test("the empty filter is not active and matches nothing", () => {
    const find = new SpanFind(sessionTree());
    assert.equal(isActive(emptyFilter()), false);
    assert.equal(find.apply(), 0);
    assert.equal(find.data.keepStamp, 0);
  });

  test("text matches label, name, hook, outcome, message and ids, in any case", () => {
    const tree = sessionTree();
    const find = new SpanFind(tree);
    const matches = (text) => {
      find.setFilter(filter({ text }));
      find.apply();
      return [...tree.nodes.values()].filter((node) => find.isHit(node)).map((node) => node.id).sort();
    };
    assert.deepEqual(matches("LOOKUP"), ["tool1"]);
    assert.deepEqual(matches("missing"), ["tool1"]); // the status message
    assert.deepEqual(matches("overridden"), ["cb"]);
    assert.deepEqual(matches("before_tool"), ["cb"]);
    assert.deepEqual(matches("tool2"), ["tool2"]); // the span id
    assert.deepEqual(matches("nothing like it"), []);
  });

  test("the ancestors of a match are kept, and with reveal expanded", () => {
    const tree = sessionTree();
    const agent = tree.nodes.get("t:agent");
    assert.ok(agent);
    agent.collapsed = true;
    const find = new SpanFind(tree);
    find.setFilter(filter({ text: "guard" }));
    assert.equal(find.apply({ reveal: true }), 1);
    assert.equal(agent.collapsed, false);
    assert.deepEqual(ids(tree.flatten()), ["run", "agent", "tool1", "cb"]);
  });

  test("kind, status, outcome and a minimum duration", () => {
    const tree = sessionTree();
    const find = new SpanFind(tree);
    const count = (fields) => {
      find.setFilter(filter(fields));
      return find.apply({ now: 10_000 * MS });
    };
    assert.equal(count({ kind: "tool" }), 2);
    assert.equal(count({ status: "error" }), 1);
    assert.equal(count({ kind: "callback", outcome: "overridden" }), 1);
    assert.equal(count({ outcome: "passed" }), 0); // only callbacks have outcomes
    assert.equal(count({ minMs: 500 }), 2); // the run and the agent
    assert.equal(count({ kind: "model", minMs: 500 }), 0);
  });

  test("a window: the spans that started in it (from included, to not)", () => {
    const tree = sessionTree();
    const find = new SpanFind(tree);
    const matching = (fields) => {
      find.setFilter(filter(fields));
      find.apply();
      return [...tree.nodes.values()].filter((node) => find.isHit(node)).map((node) => node.id).sort();
    };
    assert.equal(isActive(filter({ from: 400 * MS, to: 500 * MS })), true);
    assert.deepEqual(matching({ from: 400 * MS, to: 500 * MS }), ["cb", "tool1"]);
    assert.deepEqual(matching({ kind: "tool", from: 400 * MS, to: 500 * MS }), ["tool1"]);
    assert.deepEqual(matching({ kind: "tool", from: 400 * MS, to: 501 * MS }), ["tool1", "tool2"]);
    assert.deepEqual(matching({ kind: "tool", from: 401 * MS }), ["tool2"]); // no end to it
  });

  test("a running span's duration grows to now", () => {
    const tree = new SpanTree();
    tree.upsert(summaryOfChange({ span_id: "r", trace_id: "t", name: "x", start_time: 0, end_time: null }), 1);
    const find = new SpanFind(tree);
    find.setFilter(filter({ minMs: 1000 }));
    assert.equal(find.apply({ now: 999 * MS }), 0);
    assert.equal(find.apply({ now: 1000 * MS }), 1);
  });

  test("hostile text: regex characters, NUL, lone surrogates and huge needles are plain text", () => {
    const tree = new SpanTree();
    tree.upsert(summaryOfChange({ span_id: "x", trace_id: "t", name: "a.*b \u0000 \ud800 end", start_time: 0, end_time: 1 }), 1);
    const find = new SpanFind(tree);
    for (const [text, expected] of [[".*", 1], ["a.*b", 1], ["(", 0], ["\u0000", 1], ["\ud800", 1], ["\udc00", 0], ["x".repeat(100_000), 0]]) {
      find.setFilter(filter({ text }));
      assert.equal(find.apply(), expected, JSON.stringify(text.slice(0, 10)));
    }
  });
});

describe("the server's hits", () => {
  test("spans the server found join the matches, for the same text only", () => {
    const tree = sessionTree();
    const find = new SpanFind(tree);
    find.setFilter(filter({ text: "secret" }));
    assert.equal(find.apply(), 0);
    assert.equal(find.setHits("other", [["t", "model"]]), false);
    assert.equal(find.setHits("secret", [["t", "model"], ["t", "gone"]]), true);
    assert.equal(find.apply(), 1);
    find.setFilter(filter({ text: "secret2" })); // new text: the hits are dropped
    assert.equal(find.apply(), 0);
  });
});

describe("walking the matches", () => {
  test("next and previous in tree order, wrapping around; the place among the matches", () => {
    const tree = sessionTree();
    const find = new SpanFind(tree);
    find.setFilter(filter({ kind: "tool" }));
    find.apply();
    const hit = (node) => find.isHit(node);
    const first = find.next(null, hit);
    assert.equal(first?.id, "tool1");
    const second = find.next(first, hit);
    assert.equal(second?.id, "tool2");
    assert.equal(find.next(second, hit)?.id, "tool1"); // wraps
    assert.equal(find.next(null, hit, -1)?.id, "tool2"); // backwards from nothing: the last
    assert.equal(find.placeOf(second), 2);
    assert.equal(find.placeOf(tree.nodes.get("t:model") ?? null), 0);
    assert.equal(find.next(first, () => false), null);
  });

  test("the order is made again after the tree changed", () => {
    const tree = sessionTree();
    const find = new SpanFind(tree);
    find.setFilter(filter({ kind: "tool" }));
    find.apply();
    assert.equal(find.treeOrder().length, 6);
    tree.upsert(summaryOfChange({ span_id: "tool3", trace_id: "t", parent_span_id: "agent", name: "execute_tool x", start_time: 3, end_time: 4 }), 1);
    assert.equal(find.treeOrder().length, 6); // cached until told
    find.dataChanged();
    find.apply();
    assert.deepEqual(ids(find.treeOrder()), ["run", "agent", "model", "tool3", "tool1", "cb", "tool2"]);
    assert.equal(find.next(null, (node) => find.isHit(node))?.id, "tool3");
  });

  test("an empty tree has no next", () => {
    const find = new SpanFind(new SpanTree());
    assert.equal(find.next(null, () => true), null);
  });
});
