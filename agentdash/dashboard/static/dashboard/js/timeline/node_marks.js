/**
 * Marks the page puts on spans by key — kept for spans not loaded yet, put on each node as it
 * comes (its row repaints), taken off the nodes a new set leaves out. DOM-free.
 *
 * @module dashboard/node_marks
 */

/** @template M */
export class NodeMarks {
  /**
   * @param {import("./span_tree.js").SpanTree} data
   * @param {(node: import("./span_tree.js").SpanNode, mark: M|null) => void} put sets a node's mark (and bumps its version)
   * @param {(node: import("./span_tree.js").SpanNode) => M|null} read a node's mark now
   */
  constructor(data, put, read) {
    this.data = data;
    this.put = put;
    this.read = read;
    /** @type {Map<string, M>} */
    this.marks = new Map();
  }

  /** Replace the marks. @param {Map<string, M>} marks span key → mark */
  set(marks) {
    for (const key of this.marks.keys()) {
      const node = this.data.nodes.get(key);
      if (node && !marks.has(key)) this.put(node, null);
    }
    this.marks = marks;
    this.apply();
  }

  /** Put the marks on the nodes there are now (a no-op for a node that has its mark). */
  apply() {
    for (const [key, mark] of this.marks) {
      const node = this.data.nodes.get(key);
      if (node && this.read(node) !== mark) this.put(node, mark);
    }
  }

  get size() {
    return this.marks.size;
  }
}
