import assert from "node:assert/strict";
import { test } from "node:test";

import { outOfOrder } from "../../agentdash/dashboard/static/dashboard/js/timeline/dom_order.js";

/** The list after moving each out-of-order item right before its successor, as tree_view does. */
function reorder(positions) {
  const move = outOfOrder(positions);
  const order = positions.map((at, i) => ({ at, i })).sort((a, b) => a.at - b.at).map((x) => x.i);
  const dom = order.filter((i) => !move.has(i));
  for (let i = positions.length - 1; i >= 0; i--) {
    if (!move.has(i)) continue;
    const next = i + 1 < positions.length ? dom.indexOf(i + 1) : dom.length;
    dom.splice(next === -1 ? dom.length : next, 0, i);
  }
  return { dom, moves: move.size };
}

test("a list in order moves nothing", () => {
  assert.deepEqual([...outOfOrder([0, 1, 2, 5, 9])], []);
  assert.deepEqual([...outOfOrder([])], []);
});

test("a row recycled from the top to the bottom is one move", () => {
  // Rows B C D E should be in that order; E is the element that was A, first in the DOM.
  assert.deepEqual([...outOfOrder([1, 2, 3, 0])], [3]);
});

test("a row recycled from the bottom to the top is one move", () => {
  assert.deepEqual([...outOfOrder([3, 0, 1, 2])], [0]);
});

test("any shuffle ends in order with the fewest moves a longest run allows", () => {
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (let round = 0; round < 200; round++) {
    const n = 1 + Math.floor(random() * 40);
    const positions = [...Array(n).keys()].map((k) => k * 3).sort(() => random() - 0.5);
    const { dom, moves } = reorder(positions);
    assert.deepEqual(dom, [...Array(n).keys()], positions.join(","));
    // No in-order run is longer than the items that stayed.
    let best = 0;
    const run = positions.map(() => 1);
    positions.forEach((at, i) => {
      for (let j = 0; j < i; j++) if (positions[j] < at) run[i] = Math.max(run[i], run[j] + 1);
      best = Math.max(best, run[i]);
    });
    assert.equal(n - moves, best, positions.join(","));
  }
});
