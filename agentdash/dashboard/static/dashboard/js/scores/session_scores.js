/**
 * Scores on the session page: the span details' scoring part (score_panel.js) for the span
 * open, its run and the session; marks on the timeline's rows of the spans scored (a run's
 * scores on its first span); kept live by the socket's `score` changes (see
 * {@link SessionScores#applyItem}).
 *
 * @module dashboard/session_scores
 */

import { ScorePanel } from "./score_panel.js";
import { ScoreStore } from "./score_store.js";
import { spanKey } from "../timeline/span_node.js";

/** @typedef {import("./score_store.js").Score} Score */
/** @typedef {{text: string, title: string, bad: boolean}} Mark */

const MARK_CHARS = 24;

export class SessionScores {
  /**
   * @param {object} options
   * @param {string} options.url the session's scores
   * @param {string} options.me the reader's user name
   * @param {boolean} options.operator
   */
  constructor({ url, me, operator }) {
    this.store = new ScoreStore({ url, me });
    this.panel = new ScorePanel({ store: this.store, operator });
    /** @type {import("../timeline/timeline.js").Timeline|null} */
    this.timeline = null;
    /** runs whose scores wait for their first span to be marked */
    this.unplaced = 0;
  }

  /** The part the details pane shows. */
  get element() {
    return this.panel.root;
  }

  /**
   * Follow the timeline: the span opened is the one scored; marks on its rows.
   *
   * @param {import("../timeline/timeline.js").Timeline} timeline
   */
  attach(timeline) {
    this.timeline = timeline;
    timeline.on("select", (node) => this.panel.show(targetsOf(node)));
    timeline.on("data", () => {
      if (this.unplaced) this.mark();
    });
    this.store.on(() => this.mark());
    this.store.load();
  }

  /** A `score` change from the socket. @param {{data: Score|null}} item */
  applyItem(item) {
    this.store.applyItem(item);
  }

  /** The keyboard to the scoring of the span open (opening the first span if none is). */
  focus() {
    const timeline = this.timeline;
    if (!timeline) return;
    if (!timeline.view.selected) {
      timeline.view.ensureRows();
      const first = timeline.data.rows[0];
      if (!first) return;
      timeline.select(first.trace, first.id);
    }
    timeline.detail.ready().then(() => this.panel.focus());
  }

  /** @private The rows' marks from the scores. */
  mark() {
    const timeline = this.timeline;
    if (!timeline) return;
    /** @type {Map<string, Score[]>} */
    const bySpan = new Map();
    let unplaced = 0;
    for (const score of this.store.scores.values()) {
      let key = null;
      if (score.target === "span") key = spanKey(score.trace_id, score.span_id);
      else if (score.target === "run") {
        const root = timeline.data.roots.find((n) => String(n.run) === String(score.run) && !n.parentId);
        if (root) key = root.key;
        else unplaced += 1;
      }
      if (key) bySpan.set(key, [...(bySpan.get(key) || []), score]);
    }
    this.unplaced = unplaced;
    /** @type {Map<string, Mark>} */
    const marks = new Map();
    for (const [key, scores] of bySpan) marks.set(key, markOf(scores));
    timeline.markScores(marks);
  }
}

/**
 * What can be scored from a span's details: the span, its run, the session.
 *
 * @param {import("../timeline/span_tree.js").SpanNode} node
 * @returns {import("./score_panel.js").Scorable[]}
 */
function targetsOf(node) {
  /** @type {import("./score_panel.js").Scorable[]} */
  const targets = [{ label: "this span", target: { kind: "span", trace: node.trace, id: node.id } }];
  if (node.run !== null && node.run !== undefined) {
    targets.push({ label: "its run", target: { kind: "run", run: Number(node.run) } });
  }
  targets.push({ label: "the session", target: { kind: "session" } });
  return targets;
}

/** A row's mark for its scores. @param {Score[]} scores @returns {Mark} */
function markOf(scores) {
  const said = (/** @type {Score} */ s) => `${s.name} ${s.value}`;
  const text = scores.length === 1 ? said(scores[0]) : `${scores.length} scores`;
  return {
    text: text.length > MARK_CHARS ? `${text.slice(0, MARK_CHARS - 1)}…` : text,
    title: scores.map((s) => `${said(s)} (${s.author || s.source})${s.comment ? `: ${s.comment}` : ""}`).join("\n").slice(0, 2000),
    bad: scores.some((s) => s.value === "no"),
  };
}
