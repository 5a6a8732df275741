// dashboard/span_tree.js: the timeline's spans as a tree, with no DOM — ordering, late
// parents, versions, cycles, collapsing, states — and span_versions.js, the full data kept.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { summaryOfChange } from "../../agentdash/dashboard/static/dashboard/js/common/span_summary.js";
import { ADDED, IGNORED, SpanTree, UPDATED, spanKey } from "../../agentdash/dashboard/static/dashboard/js/timeline/span_tree.js";
import { SpanVersions } from "../../agentdash/dashboard/static/dashboard/js/timeline/span_versions.js";

/** A span's summary as the server sends it: trace "t", started at `start`, ended unless `end` is null. */
function span(id, parent, start, { trace = "t", end = start + 10, run = null, status = "ok", cancelled = false } = {}) {
  return summaryOfChange({
    summary: {
      span_id: id,
      trace_id: trace,
      parent_span_id: parent,
      name: `execute_tool ${id}`,
      start_time: start,
      end_time: end,
      status,
      run_id: run,
      span_kind: "tool",
      label: id,
      cancelled,
    },
  });
}

/** The rows as "depth:id" after a flatten. */
const rows = (tree) => tree.flatten().map((node) => `${node.depth}:${node.id}`);

describe("SpanTree ordering", () => {
  test("children sorted by start, ties by id, whatever the arrival order", () => {
    const tree = new SpanTree();
    tree.upsert(span("root", null, 0), 1);
    for (const [id, start] of [["c", 30], ["a", 10], ["b2", 20], ["b1", 20], ["d", 40]]) {
      tree.upsert(span(id, "root", start), 1);
    }
    assert.deepEqual(rows(tree), ["0:root", "1:a", "1:b1", "1:b2", "1:c", "1:d"]);
    const root = tree.nodes.get(spanKey("t", "root"));
    assert.deepEqual(root?.children.map((n) => [n.pos, n.size]), [[1, 5], [2, 5], [3, 5], [4, 5], [5, 5]]);
  });

  test("ids are unique per trace only", () => {
    const tree = new SpanTree();
    tree.upsert(span("s", null, 0, { trace: "t1" }), 1);
    tree.upsert(span("s", null, 5, { trace: "t2" }), 1);
    assert.equal(tree.size, 2);
    assert.deepEqual(tree.flatten().map((n) => n.key), ["t1:s", "t2:s"]);
  });

  test("a child that arrives first waits at the top, then moves under its parent", () => {
    const tree = new SpanTree();
    tree.upsert(span("kid", "mum", 5), 1);
    assert.deepEqual(rows(tree), ["0:kid"]);
    assert.equal(tree.nodes.get("t:kid")?.orphan, true);
    tree.upsert(span("mum", null, 0), 1);
    assert.deepEqual(rows(tree), ["0:mum", "1:kid"]);
    assert.equal(tree.nodes.get("t:kid")?.orphan, false);
    assert.equal(tree.orphans.size, 0);
  });

  test("a span that is its own parent is a root", () => {
    const tree = new SpanTree();
    tree.upsert(span("self", "self", 0), 1);
    assert.deepEqual(rows(tree), ["0:self"]);
    assert.equal(tree.orphans.size, 0);
  });

  test("two spans naming each other as parent make no cycle", () => {
    const tree = new SpanTree();
    tree.upsert(span("a", "b", 0), 1);
    tree.upsert(span("b", "a", 1), 1);
    assert.deepEqual(rows(tree), ["0:a", "1:b"]);
    const seen = new Set();
    tree.walkTrace("t", (node) => {
      assert.ok(!seen.has(node), "visited twice");
      seen.add(node);
    });
    assert.equal(seen.size, 2);
  });

  test("a long chain, built from its end: depth first without recursion", () => {
    const tree = new SpanTree();
    const n = 20_000;
    for (let i = n - 1; i >= 0; i -= 1) tree.upsert(span(`s${i}`, i ? `s${i - 1}` : null, i), 1);
    const out = tree.flatten();
    assert.equal(out.length, n);
    assert.equal(out[n - 1].depth, n - 1);
    assert.equal(tree.orphans.size, 0);
  });
});

describe("SpanTree versions", () => {
  test("the higher or equal seq wins; an older version is ignored", () => {
    const tree = new SpanTree();
    assert.equal(tree.upsert(span("a", null, 0, { status: "unset", end: null }), 5), ADDED);
    assert.equal(tree.upsert(span("a", null, 0, { status: "error" }), 4), IGNORED);
    assert.equal(tree.nodes.get("t:a")?.status, "unset");
    assert.equal(tree.upsert(span("a", null, 0, { status: "ok" }), 5), UPDATED);
    assert.equal(tree.nodes.get("t:a")?.status, "ok");
    assert.equal(tree.nodes.get("t:a")?.ver, 2);
  });

  test("an open version never replaces an ended one, whatever its seq (a preview's end, then the stored start)", () => {
    const tree = new SpanTree();
    assert.equal(tree.upsert(span("a", null, 0, { end: 9 }), -1), ADDED); // unstored: no seq yet
    assert.equal(tree.upsert(span("a", null, 0, { status: "unset", end: null }), 3), IGNORED);
    assert.equal(tree.nodes.get("t:a")?.end, 9);
    assert.equal(tree.upsert(span("a", null, 0, { end: 9, status: "error" }), 4), UPDATED);
    assert.equal(tree.nodes.get("t:a")?.status, "error");
    assert.equal(tree.nodes.get("t:a")?.seq, 4);
  });

  test("a preview applies as of its span's seq here, so the stored change replaces it", () => {
    const tree = new SpanTree();
    tree.upsert(span("a", null, 0, { end: null }), 5);
    const known = { trace_id: "t", span_id: "a", end_time: 9 };
    const fresh = { trace_id: "t", span_id: "b", end_time: null };
    assert.deepEqual(tree.previewed([known, null, { span_id: 7 }, fresh]), [
      { seq: 5, kind: "span", data: known },
      { seq: -1, kind: "span", data: fresh },
    ]);
    assert.deepEqual(tree.previewed("junk"), []);
  });

  test("a new start moves the span among its siblings", () => {
    const tree = new SpanTree();
    tree.upsert(span("p", null, 0), 1);
    tree.upsert(span("x", "p", 10), 1);
    tree.upsert(span("y", "p", 20), 1);
    assert.equal(tree.upsert(span("x", "p", 30), 2), ADDED);
    assert.deepEqual(rows(tree), ["0:p", "1:y", "1:x"]);
  });
});

describe("SpanTree rows", () => {
  test("collapsed nodes hide their children; isShown follows the last flatten", () => {
    const tree = new SpanTree();
    tree.upsert(span("r", null, 0), 1);
    tree.upsert(span("k", "r", 1), 1);
    tree.upsert(span("g", "k", 2), 1);
    const k = tree.nodes.get("t:k");
    assert.ok(k);
    k.collapsed = true;
    assert.deepEqual(rows(tree), ["0:r", "1:k"]);
    assert.equal(tree.isShown(k), true);
    const g = tree.nodes.get("t:g");
    assert.ok(g);
    assert.equal(tree.isShown(g), false);
  });

  test("with a filter's stamp set, only the spans it kept are rows", () => {
    const tree = new SpanTree();
    for (const [id, parent] of [["r", null], ["a", "r"], ["b", "r"], ["c", "b"]]) tree.upsert(span(id, parent, id.charCodeAt(0)), 1);
    for (const id of ["r", "b", "c"]) {
      const node = tree.nodes.get(`t:${id}`);
      if (node) node.keep = 7;
    }
    tree.keepStamp = 7;
    assert.deepEqual(rows(tree), ["0:r", "1:b", "2:c"]);
    tree.keepStamp = 0;
    assert.deepEqual(rows(tree), ["0:r", "1:a", "1:b", "2:c"]);
  });
});

describe("SpanTree states and traces", () => {
  test("a span without an end runs while its run is active, else it is unfinished or cancelled", () => {
    const tree = new SpanTree();
    tree.upsert(span("free", null, 0, { end: null }), 1);
    tree.upsert(span("r1", null, 0, { end: null, run: 1 }), 1);
    const free = tree.nodes.get("t:free");
    const r1 = tree.nodes.get("t:r1");
    assert.ok(free && r1);
    assert.equal(tree.stateOf(free), "running"); // of no run: runs until it ends
    assert.equal(tree.stateOf(r1), "unfinished"); // its run is unknown: it ended
    assert.equal(tree.running.size, 1);
    assert.equal(tree.applyRun({ id: 1, status: "running" }), true);
    assert.equal(tree.stateOf(r1), "running");
    assert.equal(tree.running.size, 2);
    assert.equal(tree.applyRun({ id: 1, status: "running" }), false); // nothing new
    tree.applyRun({ id: 1, status: "cancelled" });
    assert.equal(tree.stateOf(r1), "cancelled");
    assert.equal(tree.running.size, 1);
  });

  test("an ended span: error, cancelled, or ok", () => {
    const tree = new SpanTree();
    tree.upsert(span("e", null, 0, { status: "error" }), 1);
    tree.upsert(span("c", null, 0, { status: "error", cancelled: true }), 1);
    tree.upsert(span("u", null, 0, { status: "unset" }), 1);
    const state = (id) => {
      const node = tree.nodes.get(`t:${id}`);
      assert.ok(node);
      return tree.stateOf(node);
    };
    assert.deepEqual(["e", "c", "u"].map(state), ["error", "cancelled", "ok"]);
  });

  test("a trace's extent, growing to now while it runs", () => {
    const tree = new SpanTree();
    tree.upsert(span("a", null, 2e6, { end: 5e6 }), 1);
    tree.upsert(span("b", "a", 1e6, { end: 3e6 }), 1); // starts earlier: the trace starts there
    assert.equal(tree.traceMs("t", 0), 4);
    tree.upsert(span("c", "a", 4e6, { end: null }), 1);
    assert.equal(tree.traceMs("t", 11e6), 10);
    assert.equal(tree.traceMs("nope", 0), 0);
  });

  test("reset forgets everything", () => {
    const tree = new SpanTree();
    tree.upsert(span("a", null, 0), 1);
    tree.reset();
    assert.equal(tree.size, 0);
    assert.deepEqual(tree.flatten(), []);
  });
});

describe("SpanVersions", () => {
  test("keeps the newest version of each span, a few hundred at most", () => {
    const versions = new SpanVersions();
    assert.equal(versions.keep({ trace_id: "t", span_id: "a", v: 1 }, 5), "t:a");
    assert.equal(versions.keep({ trace_id: "t", span_id: "a", v: 0 }, 4), null);
    assert.equal(versions.keep({ trace_id: "t", span_id: "a", v: 2 }, 5, true), "t:a");
    assert.deepEqual(versions.get("t:a"), { data: { trace_id: "t", span_id: "a", v: 2 }, seq: 5, fetched: true });
    for (let i = 0; i < 250; i += 1) versions.keep({ trace_id: "t", span_id: `s${i}` }, 1);
    assert.equal(versions.kept.size, 200);
    assert.equal(versions.get("t:a"), undefined); // the least recent went first
    assert.ok(versions.get("t:s249"));
  });

  test("an ended version is kept against a later open one", () => {
    const versions = new SpanVersions();
    assert.equal(versions.keep({ trace_id: "t", span_id: "a", end_time: 9 }, -1), "t:a");
    assert.equal(versions.keep({ trace_id: "t", span_id: "a", end_time: null }, 3), null);
    assert.equal(versions.get("t:a")?.data.end_time, 9);
    assert.equal(versions.keep({ trace_id: "t", span_id: "a", end_time: 9, v: 1 }, 4), "t:a");
  });
});
