// dashboard/span_summary.js: a timeline row's fields, from a page's row or a live change's summary.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  DECISIONS,
  fieldIndex,
  kindOf,
  spanKind,
  summaryOfChange,
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
    assert.equal(spanKind({ name: "x", attributes: { "agentdash.span.kind": "model" } }), "model");
  });
});

// A live change's summary, as the server sends it: the summary page's row, by field name.
const ofSummary = (summary) => summaryOfChange({ span_id: "live", summary });

describe("a summary's fields, read as the server sent them", () => {
  test("every field of the server's summary", () => {
    const s = ofSummary({
      seq: 4, span_id: "s1", trace_id: "t1", parent_span_id: "p1", name: "execute_tool lookup",
      kind: "INTERNAL", start_time: 1_000, end_time: 3_000, status: "error", status_message: "boom",
      run_id: 7, span_kind: "tool", label: "lookup", outcome: "", hook: "", tokens_in: null,
      tokens_out: null, tokens_cached: null, tokens_thinking: null, cost_usd: null, offline: false,
      cancelled: "TRUE", decision: "blocked",
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
        seq: 4,
      },
    );
  });

  test("tokens are counts and a cost a finite number, else nothing", () => {
    const priced = ofSummary({ span_id: "m", tokens_in: 5, tokens_out: "6", tokens_cached: 1, tokens_thinking: null, cost_usd: 0.25 });
    assert.deepEqual([priced.tin, priced.tout, priced.tcached, priced.tthinking, priced.cost], [5, 6, 1, null, 0.25]);
    const odd = ofSummary({ span_id: "m", tokens_in: 1.5, tokens_out: "x", cost_usd: Infinity });
    assert.deepEqual([odd.tin, odd.tout, odd.cost], [null, null, null]);
    assert.equal(ofSummary({ span_id: "m", cost_usd: "0.25" }).cost, null); // a number, never text
  });

  test("missing and hostile fields", () => {
    const s = ofSummary({ span_id: 5, parent_span_id: "", start_time: "not a time", run_id: "" });
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
    const s = ofSummary({
      span_id: "c",
      name: "callback x",
      status_message: "\u0000".repeat(600),
      label: "cb\u0000\ud800",
      hook: { not: "text" },
    });
    assert.equal(s.label, "cb\u0000\ud800");
    assert.equal(s.hook, '{"not":"text"}');
    assert.equal(s.message.length, 500);
  });

  test("a huge label is kept whole, a huge message cut to 500", () => {
    const label = "é".repeat(1_000_000);
    const s = ofSummary({ span_id: "a", name: "execute_tool", status_message: "m".repeat(1_000_000), label });
    assert.equal(s.label, label);
    assert.equal(s.message, "m".repeat(500));
  });

  // The server cuts with Python's text[:n] (agentdash/spans/summaries.py): n code points.
  test("texts are cut by characters (code points), as the server cuts them", () => {
    const s = ofSummary({
      span_id: "c",
      name: "callback x",
      status_message: "😀".repeat(600),
      outcome: "😀".repeat(300),
      hook: `a${"😀".repeat(300)}`,
    });
    assert.equal(s.message, "😀".repeat(500)); // 500 characters, 1000 UTF-16 units
    assert.equal(s.outcome, "😀".repeat(200));
    assert.equal(s.hook, `a${"😀".repeat(199)}`); // never half a pair
  });

  test("a lone surrogate is one character, as in Python", () => {
    // Python: ("\ud800" + "😀" * 300)[:200] keeps the lone one and 199 pairs.
    const hook = `\ud800${"😀".repeat(300)}`;
    assert.equal(ofSummary({ span_id: "c", hook }).hook, `\ud800${"😀".repeat(199)}`);
    assert.equal(ofSummary({ span_id: "c", hook: "\udc00".repeat(300) }).hook, "\udc00".repeat(200));
  });

  test("only known guardrail decisions", () => {
    for (const decision of DECISIONS) {
      assert.equal(ofSummary({ span_id: "a", decision }).decision, decision);
    }
    for (const other of ["ALLOWED", "toString", "", 1, null]) {
      assert.equal(ofSummary({ span_id: "a", decision: other }).decision, "", String(other));
    }
  });

  test("flags: true, 1 or 'true' in any case", () => {
    const flag = (value) => ofSummary({ span_id: "a", offline: value }).offline;
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

  test("a page's row and a live change's summary of the same span read alike", () => {
    const ix = fieldIndex(FIELDS);
    const row = [
      42, "s", "t", "p", "callback before_tool", "INTERNAL", 10, null, "ok", "", 3, "callback",
      "guard", "overridden", "before_tool", null, null, null, null, null, true, false, "redacted",
    ];
    const summary = Object.fromEntries(FIELDS.map((name, i) => [name, row[i]]));
    const fromRow = summaryOfRow(row, ix);
    assert.deepEqual(summaryOfChange({ span_id: "s", summary }), fromRow);
    assert.equal(fromRow.seq, 42);
    assert.equal(fromRow.label, "guard");
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

  test("a change without a summary shows its own fields, never its attributes read again", () => {
    const data = {
      trace_id: "t", span_id: "s", name: "execute_tool find", start_time: 5, status: "ok",
      attributes: { "gen_ai.tool.name": "found", "agentdash.guardrail.decision": "blocked" },
    };
    const s = summaryOfChange(data);
    assert.deepEqual([s.id, s.trace, s.start, s.status], ["s", "t", 5, "ok"]);
    assert.equal(s.spanKind, "tool"); // what its name says, as the server guesses
    assert.equal(s.label, "execute_tool find");
    assert.equal(s.decision, "");
    assert.deepEqual(summaryOfChange({ ...data, summary: ["not", "a", "map"] }), s);
  });
});
