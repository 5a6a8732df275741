// dashboard/format.js: the session page's strings for durations, counts, clocks, costs, JSON.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  formatClock,
  formatCost,
  formatCount,
  formatDuration,
  formatInline,
  formatJson,
  formatNsTimestamp,
  nowNs,
} from "../../agentdash/dashboard/static/dashboard/js/common/format.js";

const MS = 1e6;
const S = 1e9;

/** Whether a string holds a UTF-16 surrogate without its other half. */
const hasLoneSurrogate = (text) => /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);

describe("formatDuration", () => {
  test("picks the unit by size", () => {
    assert.equal(formatDuration(0), "0 µs");
    assert.equal(formatDuration(840_000), "840 µs");
    assert.equal(formatDuration(12.34 * MS), "12.3 ms");
    assert.equal(formatDuration(250 * MS), "250 ms");
    assert.equal(formatDuration(1.25 * S), "1.25 s");
    assert.equal(formatDuration(125 * S), "2 m 05 s");
    assert.equal(formatDuration(3600 * S), "60 m 00 s");
  });

  test("nothing for what is no duration", () => {
    for (const bad of [-1, Number.NaN, Infinity, -Infinity, undefined, null, "5"]) {
      assert.equal(formatDuration(bad), "", String(bad));
    }
  });

  // Rounded first, then the unit picked: just under a boundary reads in the next unit, never
  // as the next unit's size in the smaller one.
  test("a value just under a unit's boundary reads in the next unit", () => {
    assert.equal(formatDuration(999_600), "1.0 ms"); // not "1000 µs"
    assert.equal(formatDuration(99.96 * MS), "100 ms"); // not "100.0 ms"
    assert.equal(formatDuration(999.6 * MS), "1.00 s"); // not "1000 ms"
    assert.equal(formatDuration(59.996 * S), "1 m 00 s"); // not "60.00 s"
    assert.equal(formatDuration(119.6 * S), "2 m 00 s"); // not "1 m 60 s"
  });

  test("just under a boundary but rounding down stays in its unit", () => {
    assert.equal(formatDuration(999_499), "999 µs");
    assert.equal(formatDuration(99.94 * MS), "99.9 ms");
    assert.equal(formatDuration(999.4 * MS), "999 ms");
    assert.equal(formatDuration(59.994 * S), "59.99 s");
    assert.equal(formatDuration(119.4 * S), "1 m 59 s");
  });

  test("minutes in plain digits, however many", () => {
    assert.equal(formatDuration(6e22 * S), "1000000000000000000000 m 00 s"); // not "1e+21 m"
  });
});

describe("formatCount", () => {
  test("groups thousands and rounds to whole numbers", () => {
    assert.equal(formatCount(0), "0");
    assert.equal(formatCount(999), "999");
    assert.equal(formatCount(1000), "1,000");
    assert.equal(formatCount(50_000), "50,000");
    assert.equal(formatCount(1_234_567), "1,234,567");
    assert.equal(formatCount(-1_234_567), "-1,234,567");
    assert.equal(formatCount(1.5), "2");
    assert.equal(formatCount(2_147_483_648), "2,147,483,648");
    assert.equal(formatCount(Number.MAX_SAFE_INTEGER), "9,007,199,254,740,991");
  });

  // Below 1e21 toFixed writes a number's exact digits; from there on it writes "1e+21".
  test("1e21 and more: still all the digits, grouped", () => {
    assert.equal(formatCount(1e20), "100,000,000,000,000,000,000");
    assert.equal(formatCount(1e21), "1,000,000,000,000,000,000,000");
    assert.equal(formatCount(-1e21), "-1,000,000,000,000,000,000,000");
    assert.equal(formatCount(2 ** 70), "1,180,591,620,717,411,303,424");
    assert.doesNotMatch(formatCount(Number.MAX_VALUE), /e/);
  });

  test("no minus sign on what rounds to zero", () => {
    assert.equal(formatCount(-0), "0");
    assert.equal(formatCount(-0.4), "0");
  });

  test("nothing for what is not a finite number (strings are not parsed)", () => {
    for (const bad of [Number.NaN, Infinity, -Infinity, null, undefined, "1000", {}, [5]]) {
      assert.equal(formatCount(bad), "", String(bad));
    }
  });
});

describe("formatCost", () => {
  test("4 to 6 significant digits, grouped", () => {
    assert.equal(formatCost(0.00171), "$0.001710");
    assert.equal(formatCost(4.02952), "$4.02952");
    assert.equal(formatCost(12_345.67), "$12,345.7");
    assert.equal(formatCost(1_234_567.891), "$1,234,570");
    assert.equal(formatCost(123), "$123.0");
    assert.equal(formatCost(0.1 + 0.2), "$0.3000");
    assert.equal(formatCost(1.23456789), "$1.23457");
  });

  test("nothing spent, unknown, negative", () => {
    assert.equal(formatCost(0), "$0");
    assert.equal(formatCost(-0), "$0");
    assert.equal(formatCost(null), "—");
    assert.equal(formatCost(undefined), "—");
    assert.equal(formatCost(Number.NaN), "—");
    assert.equal(formatCost(Infinity), "—");
    assert.equal(formatCost(-0.5), "−$0.5000");
  });

  test("under a millionth of a dollar: Intl, still in plain digits", () => {
    assert.equal(formatCost(1e-6), "$0.000001000");
    assert.equal(formatCost(1e-7), "$0.0000001000");
    assert.equal(formatCost(1e-9), "$0.000000001000");
    assert.equal(formatCost(-1e-7), "−$0.0000001000");
  });

  test("a million and more: whole dollars", () => {
    assert.equal(formatCost(1e6), "$1,000,000");
    assert.equal(formatCost(999_999.5), "$1,000,000");
    assert.equal(formatCost(1e20), "$100,000,000,000,000,000,000");
  });

  test("1e21 and more: whole dollars, 6 significant digits, no exponent", () => {
    assert.equal(formatCost(1e21), "$1,000,000,000,000,000,000,000");
    assert.equal(formatCost(1.23456789e21), "$1,234,570,000,000,000,000,000");
    assert.equal(formatCost(-1e21), "−$1,000,000,000,000,000,000,000");
    assert.doesNotMatch(formatCost(Number.MAX_VALUE), /e/);
  });
});

describe("formatClock", () => {
  test("24-hour time in the reader's zone, ASCII digits", () => {
    const at = new Date(2024, 0, 2, 3, 4, 5); // local time
    assert.equal(formatClock(at.getTime() / 1000), "03:04:05");
    assert.match(formatClock(0), /^\d\d:\d\d:\d\d$/);
  });

  test("nothing for what no date can hold", () => {
    for (const bad of [Number.NaN, Infinity, null, undefined, "0", 8.64e12 + 1, 1e20]) {
      assert.equal(formatClock(bad), "", String(bad));
    }
  });
});

describe("formatNsTimestamp", () => {
  test("ISO with milliseconds", () => {
    assert.equal(formatNsTimestamp(0), "1970-01-01T00:00:00.000Z");
    assert.equal(formatNsTimestamp(1_700_000_000_123_456_789), "2023-11-14T22:13:20.123Z");
    assert.equal(formatNsTimestamp(-1e6), "1969-12-31T23:59:59.999Z");
  });

  test("nothing for what is not a finite number", () => {
    for (const bad of [Number.NaN, Infinity, null, undefined, "0"]) {
      assert.equal(formatNsTimestamp(bad), "", String(bad));
    }
  });

  test("a finite time past what a Date holds is said in nanoseconds", () => {
    assert.equal(formatNsTimestamp(8.64e21), "+275760-09-13T00:00:00.000Z"); // the last a Date holds
    assert.equal(formatNsTimestamp(1e30), "1,000,000,000,000,000,019,884,624,838,656 ns since 1970 (no date that far)");
    assert.equal(formatNsTimestamp(-1e22), "-10,000,000,000,000,000,000,000 ns since 1970 (no date that far)");
    assert.match(formatNsTimestamp(Number.MAX_VALUE), / ns since 1970 /);
  });
});

describe("formatJson", () => {
  test("objects and arrays indented; JSON held in a string too", () => {
    assert.equal(formatJson({ a: [1] }), '{\n  "a": [\n    1\n  ]\n}');
    assert.equal(formatJson(' {"a":1} '), '{\n  "a": 1\n}');
    assert.equal(formatJson("[1,2]"), "[\n  1,\n  2\n]");
  });

  test("other strings as they are, even when they look like JSON", () => {
    assert.equal(formatJson("{not json"), "{not json");
    assert.equal(formatJson("plain"), "plain");
    assert.equal(formatJson('"quoted"'), '"quoted"');
    assert.equal(formatJson("\u0000"), "\u0000");
    assert.equal(formatJson("\ud800"), "\ud800");
  });

  test("escapes stay escaped: NUL and a lone surrogate come back as JSON escapes", () => {
    assert.equal(formatJson('{"a":"\\u0000"}'), '{\n  "a": "\\u0000"\n}');
    assert.equal(formatJson('["\\ud800"]'), '[\n  "\\ud800"\n]');
    assert.equal(formatJson(["\ud800"]), '[\n  "\\ud800"\n]');
  });

  test("undefined is nothing, null is null", () => {
    assert.equal(formatJson(undefined), "");
    assert.equal(formatJson(null), "null");
  });

  test("what JSON cannot write is nothing, still a string", () => {
    assert.equal(formatJson(() => 1), "");
    assert.equal(formatJson(Symbol("s")), "");
    assert.equal(formatJson({ f: () => 1 }), "{}");
  });

  test("a large payload in one piece", () => {
    const text = `[${"1,".repeat(200_000)}1]`;
    const pretty = formatJson(text);
    assert.equal(pretty.split("\n").length, 200_003);
  });
});

describe("formatInline", () => {
  test("JSON on one line, cut with an ellipsis", () => {
    assert.equal(formatInline({ a: 1 }), '{"a":1}');
    assert.equal(formatInline("ab"), '"ab"');
    assert.equal(formatInline("ab", 4), '"ab"');
    assert.equal(formatInline("abc", 4), '"ab…');
    assert.equal(formatInline(undefined), "");
  });

  test("a huge string costs its cut, not its length", () => {
    const out = formatInline("x".repeat(5_000_000));
    assert.equal(out.length, 160);
    assert.ok(out.endsWith("…"));
  });

  test("control characters and lone surrogates are escaped", () => {
    assert.equal(formatInline("\u0000"), '"\\u0000"');
    assert.equal(formatInline("\ud800"), '"\\ud800"');
  });

  test("the cut never splits a surrogate pair", () => {
    assert.ok(!hasLoneSurrogate(formatInline("😀".repeat(100), 11)));
    assert.equal(formatInline("😀".repeat(100), 11), '"😀😀😀😀…'); // the fifth does not fit: dropped whole
    assert.equal(formatInline("😀".repeat(100), 12), '"😀😀😀😀😀…');
    assert.equal(formatInline({ k: "a😀" }, 10), '{"k":"a😀…');
  });
});

test("nowNs is Unix nanoseconds", () => {
  const before = Date.now() * 1e6;
  const now = nowNs();
  assert.ok(Math.abs(now - before) < 5 * S, `${now} vs ${before}`);
});
