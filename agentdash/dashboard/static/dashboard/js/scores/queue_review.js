/**
 * An annotation queue's review page (docs/SCORES.md): the queue's scores for the run under
 * review (score_panel.js, over the session's scores endpoint), and the page's keys — `n` done
 * and next, `x` skip, `o` open the session; on a score's row `1`…`9` pick its choices. The
 * first score has the keyboard when the page opens.
 *
 * @module dashboard/queue_review
 */

import { readJsonScript } from "../../../core/js/dom.js";
import { ScorePanel } from "./score_panel.js";
import { ScoreStore } from "./score_store.js";

function main() {
  const data = readJsonScript("review-data");
  const store = new ScoreStore({ url: data.scores_path, me: data.me });
  const panel = new ScorePanel({ store, operator: true, only: data.definitions });
  /** @type {HTMLElement} */ (document.getElementById("review-scores")).append(panel.root);
  panel.show([{ label: "this run", target: { kind: "run", run: Number(data.run) } }]);
  let focused = false;
  store.on(() => {
    if (!focused && store.loaded) {
      focused = true;
      panel.focus();
    }
  });
  store.load();
  const form = (/** @type {string} */ id) => /** @type {HTMLFormElement} */ (document.getElementById(id));
  // A score still on its way when the reviewer moves on is waited for, not dropped.
  for (const id of ["review-done", "review-skip"]) {
    form(id).addEventListener("submit", (event) => {
      if (!store.pending.size) return;
      event.preventDefault();
      store.settled().then(() => form(id).requestSubmit());
    });
  }
  const submit = (/** @type {string} */ id) => form(id).requestSubmit();
  /** @type {Record<string, () => void>} */
  const actions = {
    n: () => submit("review-done"),
    x: () => submit("review-skip"),
    o: () => /** @type {HTMLAnchorElement} */ (document.getElementById("open-session")).click(),
  };
  addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.ctrlKey || event.altKey || event.metaKey) return;
    const target = /** @type {HTMLElement} */ (event.target);
    if (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.tagName === "SELECT") return;
    const action = actions[event.key];
    if (!action) return;
    event.preventDefault();
    action();
  });
}

main();
