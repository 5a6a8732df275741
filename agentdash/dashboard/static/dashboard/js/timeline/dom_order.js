/**
 * Which items of a list must move so that the list is in order, with as few moves as there
 * can be: the items outside a longest run already in order (a longest increasing
 * subsequence) move; the rest stay. The timeline's pooled rows use it to put the rows in view
 * in row order again after reuse (tree_view.js): a row recycled from the top to the bottom
 * is one move, not one per row in view. DOM-free.
 */

/**
 * @param {number[]} positions where each item is now, in the order the items should be
 *   (distinct numbers)
 * @returns {Set<number>} the indexes (into `positions`) of the items to move
 */
export function outOfOrder(positions) {
  /** @type {number[]} tails[k]: index of the smallest last item of an increasing run of k+1 */
  const tails = [];
  /** @type {number[]} the item before each item on its run, -1 for none */
  const before = new Array(positions.length).fill(-1);
  positions.forEach((at, i) => {
    let low = 0;
    let high = tails.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (positions[tails[mid]] < at) low = mid + 1;
      else high = mid;
    }
    if (low > 0) before[i] = tails[low - 1];
    tails[low] = i;
  });
  const move = new Set(positions.keys());
  for (let i = tails.length ? tails[tails.length - 1] : -1; i !== -1; i = before[i]) move.delete(i);
  return move;
}
