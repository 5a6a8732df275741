// monitor/chart_model.js: the Monitor's chart shapes read back to the numbers they were made of.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { HEIGHT, WIDTH, drillHref, lineRuns, niceTop, scoresHref, stackedBars } from "../../agentdash/monitor/static/monitor/js/chart_model.js";

describe("niceTop", () => {
  test("1, 2 or 5 times a power of ten, at least the largest", () => {
    assert.deepEqual([0, 0.3, 1, 3, 7, 12, 99, 101, 4000].map(niceTop), [1, 0.5, 1, 5, 10, 20, 100, 200, 5000]);
    assert.equal(niceTop(Number.NaN), 1);
  });
});

describe("stackedBars", () => {
  test("each part's height is its share of the axis, stacked from the bottom", () => {
    const shapes = stackedBars([[2, 1], [0, 0], [4, 0]], 5);
    assert.equal(shapes.length, 3); // nothing drawn for a zero
    const [first, second, third] = shapes;
    assert.equal(first.height, (2 / 5) * HEIGHT);
    assert.equal(first.y, HEIGHT - first.height);
    assert.equal(second.y, first.y - second.height); // on top of the first part
    assert.equal(second.value, 1);
    assert.equal(third.bucket, 2);
    assert.ok(third.x > WIDTH / 3 * 2 && third.x + third.width < WIDTH);
  });
});

describe("lineRuns", () => {
  test("a bucket without a value breaks the line", () => {
    const runs = lineRuns([1, 2, null, 4], 4);
    assert.equal(runs.length, 2);
    assert.equal(runs[0].split(" ").length, 2);
    const [x, y] = runs[1].split(",").map(Number);
    assert.equal(y, 0); // 4 of 4: the top
    assert.equal(x, WIDTH / 4 * 3.5);
  });
});

/** A drill-down link's query: it must lead to the sessions list ("/"). */
function sessionsQuery(href) {
  const [path, query] = href.split("?");
  assert.equal(path, "/");
  return new URLSearchParams(query);
}

describe("scoresHref", () => {
  test("the bucket's window, the score's name when one is charted, the chart's owner", () => {
    const href = scoresHref("2026-11-20T09:05:00+00:00", 3600, { owner: "bob" }, "helpful");
    const params = sessionsQuery(href);
    assert.equal(params.get("scores_from"), "2026-11-20T09:05:00.000Z");
    assert.equal(params.get("scores_to"), "2026-11-20T10:05:00.000Z");
    assert.equal(params.get("score"), "helpful");
    assert.equal(params.get("owner"), "bob");
    const any = sessionsQuery(scoresHref("2026-11-20T09:05:00Z", 300, {}));
    assert.equal(any.get("score"), null); // several names charted: scored with any
  });
});

describe("drillHref", () => {
  test("the bucket's window, its outcome and the chart's agent", () => {
    const href = drillHref("2026-11-20T09:05:00+00:00", 300, { agent: "capital_agent", tool: "x" }, "failed");
    const params = sessionsQuery(href);
    assert.equal(params.get("runs_from"), "2026-11-20T09:05:00.000Z");
    assert.equal(params.get("runs_to"), "2026-11-20T09:10:00.000Z");
    assert.equal(params.get("outcome"), "failed");
    assert.equal(params.get("agent"), "capital_agent");
    assert.equal(params.get("tool"), null); // the sessions list has no tool filter
  });
});
