// dashboard/span_summary.js: a timeline row's fields, from a live span's data or a page's row.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  ATTR,
  DECISIONS,
  fieldIndex,
  kindOf,
  spanKind,
  summaryOfChange,
  summaryOfData,
  summaryOfRow,
} from "../../agentdash/dashboard/static/dashboard/js/common/span_summary.js";

describe("kindOf / spanKind", () => {
  test("the attribute wins when it names a kind", () => {
    assert.equal(kindOf("tool", "invoke_agent a"), "tool");
  });

  test("else the GenAI operation starting the name", () => {
    assert.equal(kindOf(undefined, "invoke_agent root"), "agent");
    assert.equal(kindOf("bogus", "generate_content gemini"), "model");
    assert.equal(kindOf(null, "execute_tool lookup"), "tool");
    assert.equal(kindOf(7, "callback before_model"), "callback");
    assert.equal(kindOf(undefined, "my_span"), "");
  });

  test("inherited names are no kinds", () => {
    for (const name of ["toString", "__proto__", "constructor", "hasOwnProperty"]) {
      assert.equal(kindOf(name, ""), "", name);
    }
  });

  test("spanKind says other when unknown, and survives missing fields", () => {
    assert.equal(spanKind({}), "other");
    assert.equal(spanKind({ name: "execute_tool t", attributes: undefined }), "tool");
    assert.equal(spanKind({ name: "x", attributes: { [ATTR.kind]: "model" } }), "model");
  });
});

describe("summaryOfData", () => {
  test("reads the row's fields out of the attributes", () => {
    const s = summaryOfData({
      span_id: "s1",
      trace_id: "t1",
      parent_span_id: "p1",
      name: "execute_tool lookup",
      kind: "INTERNAL",
      start_time: 1_000,
      end_time: 3_000,
      status: "error",
      status_message: "boom",
      run_id: 7,
      attributes: {
        [ATTR.tool]: "lookup",
        [ATTR.decision]: "blocked",
        [ATTR.cancelled]: "TRUE",
        [ATTR.offline]: false,
      },
    });
    assert.deepEqual(
      { ...s },
      {
        id: "s1",
        trace: "t1",
        parentId: "p1",
        name: "execute_tool lookup",
        kind: "INTERNAL",
        start: 1_000,
        end: 3_000,
        status: "error",
        message: "boom",
        run: 7,
        spanKind: "tool",
        label: "lookup",
        outcome: "",
        hook: "",
        tin: null,
        tout: null,
        tcached: null,
        tthinking: null,
        cost: null,
        offline: false,
        cancelled: true,
        decision: "blocked",
      },
    );
  });

  test("the server's usage wins over the token attributes", () => {
    const data = {
      span_id: "m",
      name: "generate_content",
      attributes: { [ATTR.tokensIn]: "12", [ATTR.tokensOut]: 3 },
    };
    const fromAttributes = summaryOfData(data);
    assert.deepEqual([fromAttributes.tin, fromAttributes.tout, fromAttributes.cost], [12, 3, null]);
    const priced = summaryOfData({ ...data, usage: { input: 5, output: "6", cached: 1, thinking: null, cost_usd: 0.25 } });
    assert.deepEqual([priced.tin, priced.tout, priced.tcached, priced.tthinking, priced.cost], [5, 6, 1, null, 0.25]);
    const odd = summaryOfData({ ...data, usage: { input: 1.5, output: "x", cost_usd: Infinity } });
    assert.deepEqual([odd.tin, odd.tout, odd.cost], [null, null, null]);
    const none = summaryOfData({ ...data, usage: null });
    assert.deepEqual([none.tin, none.tout, none.cost], [null, null, null]);
  });

  test("missing and hostile fields", () => {
    const s = summaryOfData({ span_id: 5, parent_span_id: "", start_time: "not a time", run_id: "", attributes: "no" });
    assert.equal(s.id, "5");
    assert.equal(s.trace, "");
    assert.equal(s.parentId, null);
    assert.equal(s.start, 0);
    assert.equal(s.end, null);
    assert.equal(s.status, "unset");
    assert.equal(s.run, null);
    assert.equal(s.label, "5"); // no name either: the id
    assert.equal(s.spanKind, "");
  });

  test("NUL and lone surrogates pass through as text; messages are cut", () => {
    const s = summaryOfData({
      span_id: "c",
      name: "callback x",
      status_message: "\u0000".repeat(600),
      attributes: { [ATTR.callback]: "cb\u0000\ud800", [ATTR.hook]: { not: "text" } },
    });
    assert.equal(s.label, "cb\u0000\ud800");
    assert.equal(s.hook, '{"not":"text"}');
    assert.equal(s.message.length, 500);
  });

  test("a huge label is kept whole, a huge message cut to 500", () => {
    const label = "é".repeat(1_000_000);
    const s = summaryOfData({ span_id: "a", name: "execute_tool", status_message: "m".repeat(1_000_000), attributes: { [ATTR.tool]: label } });
    assert.equal(s.label, label);
    assert.equal(s.message, "m".repeat(500));
  });

  // The server cuts with Python's text[:n] (agentdash/spans/summaries.py): n code points.
  test("texts are cut by characters (code points), as the server cuts them", () => {
    const s = summaryOfData({
      span_id: "c",
      name: "callback x",
      status_message: "😀".repeat(600),
      attributes: { [ATTR.outcome]: "😀".repeat(300), [ATTR.hook]: `a${"😀".repeat(300)}` },
    });
    assert.equal(s.message, "😀".repeat(500)); // 500 characters, 1000 UTF-16 units
    assert.equal(s.outcome, "😀".repeat(200));
    assert.equal(s.hook, `a${"😀".repeat(199)}`); // never half a pair
  });

  test("a lone surrogate is one character, as in Python", () => {
    // Python: ("\ud800" + "😀" * 300)[:200] keeps the lone one and 199 pairs.
    const hook = `\ud800${"😀".repeat(300)}`;
    assert.equal(summaryOfData({ span_id: "c", attributes: { [ATTR.hook]: hook } }).hook, `\ud800${"😀".repeat(199)}`);
    const low = "\udc00".repeat(300);
    assert.equal(summaryOfData({ span_id: "c", attributes: { [ATTR.hook]: low } }).hook, "\udc00".repeat(200));
  });

  test("only known guardrail decisions", () => {
    for (const decision of DECISIONS) {
      assert.equal(summaryOfData({ span_id: "a", attributes: { [ATTR.decision]: decision } }).decision, decision);
    }
    for (const other of ["ALLOWED", "toString", "", 1, null]) {
      assert.equal(summaryOfData({ span_id: "a", attributes: { [ATTR.decision]: other } }).decision, "", String(other));
    }
  });

  test("flags: true, 1 or 'true' in any case", () => {
    const flag = (value) => summaryOfData({ span_id: "a", attributes: { [ATTR.offline]: value } }).offline;
    assert.deepEqual([true, 1, "true", "True", "TRUE"].map(flag), [true, true, true, true, true]);
    assert.deepEqual([false, 0, "1", "yes", null, undefined, {}].map(flag), [false, false, false, false, false, false, false]);
  });
});

describe("fieldIndex / summaryOfRow", () => {
  const FIELDS = [
    "seq", "span_id", "trace_id", "parent_span_id", "name", "kind", "start_time", "end_time",
    "status", "status_message", "run_id", "span_kind", "label", "outcome", "hook", "tokens_in",
    "tokens_out", "tokens_cached", "tokens_thinking", "cost_usd", "offline", "cancelled", "decision",
  ];

  test("fieldIndex: each field's column; anything but a list is no fields", () => {
    assert.deepEqual(fieldIndex(["a", "b"]), { a: 0, b: 1 });
    assert.deepEqual(fieldIndex(null), {});
    assert.deepEqual(fieldIndex("ab"), {});
  });

  test("a row becomes the same summary as the live span it came from", () => {
    const ix = fieldIndex(FIELDS);
    const row = [
      42, "s", "t", "p", "callback before_tool", "INTERNAL", 10, null, "ok", "", 3, "callback",
      "guard", "overridden", "before_tool", null, null, null, null, null, true, false, "redacted",
    ];
    const fromRow = summaryOfRow(row, ix);
    const fromData = summaryOfData({
      span_id: "s", trace_id: "t", parent_span_id: "p", name: "callback before_tool", kind: "INTERNAL",
      start_time: 10, end_time: null, status: "ok", status_message: "", run_id: 3,
      attributes: {
        [ATTR.kind]: "callback", [ATTR.callback]: "guard", [ATTR.outcome]: "overridden",
        [ATTR.hook]: "before_tool", [ATTR.offline]: true, [ATTR.decision]: "redacted",
      },
    });
    const { seq, ...summary } = fromRow;
    assert.equal(seq, 42);
    assert.deepEqual(summary, fromData);
  });

  test("a span kind the server would never send is no kind (nor inherited: toString)", () => {
    const ix = fieldIndex(["span_id", "name", "span_kind"]);
    assert.equal(summaryOfRow(["a", "x", "toString"], ix).spanKind, "");
    assert.equal(summaryOfRow(["a", "x", "constructor"], ix).spanKind, "");
    assert.equal(summaryOfRow(["a", "execute_tool t", "bogus"], ix).spanKind, "tool"); // guessed, as the server does
    assert.equal(summaryOfRow(["a", "x", "model"], ix).spanKind, "model");
  });

  test("fields the page does not send read as missing", () => {
    const s = summaryOfRow(["a", "generate_content m"], fieldIndex(["span_id", "name"]));
    assert.equal(s.spanKind, "model"); // guessed from the name, as the server does
    assert.equal(s.seq, 0);
    assert.equal(s.end, null);
    assert.equal(s.cost, null);
  });

  test("an empty row does not throw", () => {
    const s = summaryOfRow([], {});
    assert.equal(s.id, "undefined");
    assert.equal(s.seq, 0);
  });
});

describe("summaryOfChange", () => {
  test("reads the server's summary of a change, not the attributes (a trimmed change keeps its fields)", () => {
    const summary = {
      trace_id: "t", span_id: "s", parent_span_id: null, name: "execute_tool find", kind: "internal",
      start_time: 10, end_time: 20, status: "ok", status_message: "", run_id: 3, seq: 7,
      span_kind: "tool", label: "find", outcome: "", hook: "", tokens_in: null, tokens_out: null,
      offline: false, cancelled: true, tokens_cached: null, tokens_thinking: null, cost_usd: null,
      decision: "blocked",
    };
    const data = { trace_id: "t", span_id: "s", name: "execute_tool find", attributes: { "agentdash.truncated": true }, summary };
    const s = summaryOfChange(data);
    assert.equal(s.spanKind, "tool");
    assert.equal(s.label, "find");
    assert.equal(s.decision, "blocked");
    assert.equal(s.cancelled, true);
    assert.equal(s.run, 3);
    assert.equal(s.end, 20);
  });

  test("derives a change without a summary as the server would", () => {
    const data = { trace_id: "t", span_id: "s", name: "execute_tool find", attributes: { "gen_ai.tool.name": "find" } };
    assert.deepEqual(summaryOfChange(data), summaryOfData(data));
    assert.deepEqual(summaryOfChange({ ...data, summary: ["not", "a", "map"] }), summaryOfData(data));
  });
});
