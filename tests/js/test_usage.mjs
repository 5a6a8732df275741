// dashboard/usage.js and dashboard/run_status.js: tokens and cost as shown, the session's
// running total, and what a run's status allows.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { isActive, mayCancel } from "../../agentdash/dashboard/static/dashboard/js/common/run_status.js";
import { SessionUsage, costText, hasUsage, usageText, usageTitle } from "../../agentdash/dashboard/static/dashboard/js/common/usage.js";

describe("hasUsage", () => {
  test("a model call's counts, or totals with calls", () => {
    assert.equal(hasUsage({ input: 3, output: null, cost_usd: null }), true);
    assert.equal(hasUsage({ input: Number.NaN, output: 1, cost_usd: null }), true);
    assert.equal(hasUsage({ calls: 2, input: null, output: null, cost_usd: 0 }), true);
    assert.equal(hasUsage({ calls: 0, input: 5, output: 5, cost_usd: 0 }), false); // totals of no call
  });

  test("nothing else", () => {
    for (const bad of [null, undefined, "usage", 5, [], {}, { input: Infinity }, { input: "3" }, { calls: "3" }]) {
      assert.equal(hasUsage(bad), false, JSON.stringify(bad));
    }
  });
});

describe("costText / usageText / usageTitle", () => {
  test("a partial cost is a lower bound", () => {
    assert.equal(costText({ input: 1, output: 1, cost_usd: 0.5, unpriced: ["m"] }), "≥ $0.5000");
    assert.equal(costText({ input: 1, output: 1, cost_usd: null, unpriced: ["m"] }), "—");
    assert.equal(costText({ input: 1, output: 1, cost_usd: 0.5, unpriced: [] }), "$0.5000");
  });

  test("one line", () => {
    assert.equal(usageText({ input: 1200, output: 34, cost_usd: 0.001234 }), "1,200 → 34 tok · $0.001234");
    assert.equal(usageText({ input: null, output: Number.NaN, cost_usd: null }), "? → ? tok · —");
  });

  test("the title names every count reported, and what has no price", () => {
    const title = usageTitle({
      input: 1200, output: 34, cached: 100, thinking: 7, cost_usd: 0.001234, calls: 1,
      model: "gemini\u0000", price_as_of: "2025-01-01", unpriced: ["", "x", null],
    });
    assert.deepEqual(title.split("\n"), [
      "input 1,200 tokens (100 cached)",
      "output 34 tokens (7 thinking)",
      "1 model call",
      "cost $0.001234",
      "model gemini\u0000, price as of 2025-01-01",
      "no price for: (unnamed), x, (unnamed) (not in the cost)",
    ]);
    assert.equal(usageTitle({ input: null, output: null, cost_usd: null }), "cost unknown: no price for this model");
    assert.match(usageTitle({ input: 1, output: 1, calls: 2, cost_usd: 0 }), /^2 model calls$/m);
  });
});

describe("SessionUsage", () => {
  const snapshot = { input: 100, output: 10, calls: 3, priced_calls: 3, cost_usd: 0.3, unpriced: [] };
  const runOne = { id: 1, usage: { input: 40, output: 4, calls: 1, priced_calls: 1, cost_usd: 0.1 } };

  test("no total before the snapshot; a run told before it is not counted twice", () => {
    const totals = new SessionUsage();
    assert.equal(totals.total, null);
    totals.run(runOne);
    assert.equal(totals.total, null);
    totals.load(snapshot, [runOne]);
    assert.deepEqual(totals.total, { ...snapshot, cached: null, thinking: null });
  });

  test("a run's growing totals replace its part of the snapshot's", () => {
    const totals = new SessionUsage();
    totals.load(snapshot, [runOne]);
    totals.run({ id: 1, usage: { input: 50, output: 5, calls: 2, priced_calls: 1, cost_usd: 0.15, unpriced: ["m2"] } });
    const total = totals.total;
    assert.equal(total?.input, 110);
    assert.equal(total?.output, 11);
    assert.equal(total?.calls, 4);
    assert.equal(total?.cost_usd, 0.35);
    assert.deepEqual(total?.unpriced, ["m2"]);
  });

  test("run ids match whatever their type", () => {
    const totals = new SessionUsage();
    totals.load(snapshot, [runOne]);
    totals.run({ id: "1", usage: { input: 40, output: 4, calls: 1, priced_calls: 1, cost_usd: 0.1 } });
    assert.equal(totals.total?.input, 100);
  });

  test("sums of floats are rounded to 1e-12 dollars", () => {
    const totals = new SessionUsage();
    totals.load({ input: 0, output: 0, calls: 1, priced_calls: 1, cost_usd: 0.1 }, []);
    totals.run({ id: 9, usage: { input: 0, output: 0, calls: 1, priced_calls: 1, cost_usd: 0.2 } });
    assert.equal(totals.total?.cost_usd, 0.3);
  });

  test("calls of which none was priced cost nothing known", () => {
    const totals = new SessionUsage();
    totals.load({ input: 5, output: 5, calls: 2, priced_calls: 0, cost_usd: null, unpriced: ["b", "a"] }, []);
    assert.equal(totals.total?.cost_usd, null);
    assert.deepEqual(totals.total?.unpriced, ["a", "b"]);
  });

  test("bad input is ignored", () => {
    const totals = new SessionUsage();
    totals.load("x", []);
    assert.equal(totals.total, null);
    totals.load(snapshot, [null, { id: 2 }, { id: 3, usage: "no" }]);
    assert.equal(totals.total?.input, 100);
  });
});

describe("run status", () => {
  test("active: queued or running", () => {
    assert.deepEqual(["queued", "running", "waiting", "succeeded", "failed", "cancelled"].map(isActive), [true, true, false, false, false, false]);
  });

  test("cancellable: active, or waiting for an approval", () => {
    assert.deepEqual(["queued", "running", "waiting", "succeeded", "failed", "cancelled"].map(mayCancel), [true, true, true, false, false, false]);
  });

  test("nothing and inherited names are neither", () => {
    for (const status of [null, undefined, "", "RUNNING", "toString", "__proto__"]) {
      assert.equal(isActive(status), false, String(status));
      assert.equal(mayCancel(status), false, String(status));
    }
  });
});
