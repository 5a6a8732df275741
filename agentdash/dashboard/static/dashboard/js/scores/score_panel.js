/**
 * Scoring on the session page (docs/SCORES.md): the scores given to what is open — a span,
 * its run, the session — with who gave them, and the reader's own score on each definition
 * operators keep: yes/no and category buttons, a number in its range, an optional comment.
 * Keys: with the keyboard on a score's row, `1`…`9` press its first…ninth choice; Tab moves
 * between rows. A score given again replaces the reader's. All score text is shown as text.
 *
 * @module dashboard/score_panel
 */

import { el } from "../../../core/js/dom.js";

/** @typedef {import("./score_store.js").ScoreStore} ScoreStore */
/** @typedef {import("./score_store.js").Score} Score */
/** @typedef {import("./score_store.js").Target} Target */
/** @typedef {import("./score_store.js").Definition} Definition */
/** @typedef {{label: string, target: Target}} Scorable  a target and how the panel names it */

const SOURCE_TEXT = /** @type {Record<string, string>} */ ({
  person: "",
  end_user: "end user",
  evaluator: "evaluator",
  api: "API",
});

export class ScorePanel {
  /**
   * @param {object} options
   * @param {ScoreStore} options.store
   * @param {boolean} options.operator the reader may take back anyone's score
   * @param {string[]|null} [options.only] the definitions offered (all enabled ones: null)
   */
  constructor({ store, operator, only = null }) {
    this.store = store;
    this.operator = operator;
    this.only = only;
    /** @type {Scorable[]} */
    this.targets = [];
    this.root = el("section", { class: "score-panel", attrs: { "aria-label": "Scores", hidden: true } });
    this.given = el("ul", { class: "score-list" });
    this.choice = el("select", { attrs: { "aria-label": "What to score" } });
    this.comment = el("input", {
      attrs: { type: "text", maxlength: "2000", placeholder: "Comment (optional)", "aria-label": "Comment with the score" },
    });
    this.rows = el("div", { class: "score-rows" });
    this.status = el("p", { class: "score-status muted", attrs: { role: "status" } });
    const pick = el("label", { class: "score-target", children: [el("span", { text: "Score" }), this.choice] });
    this.root.append(
      el("h4", { text: "Scores" }),
      this.given,
      el("div", { class: "score-form", children: [pick, this.rows, this.comment, this.status] }),
    );
    this.choice.addEventListener("change", () => this.draw());
    this.root.addEventListener("click", (event) => this.clicked(event));
    this.root.addEventListener("keydown", (event) => this.key(event));
    store.on(() => this.draw());
  }

  /**
   * Show the scores of these targets (the first is scored unless the reader picks another).
   *
   * @param {Scorable[]} targets
   */
  show(targets) {
    const before = this.targets.map((t) => t.label).join("|");
    this.targets = targets;
    if (targets.map((t) => t.label).join("|") !== before) {
      this.choice.replaceChildren(...targets.map((t, i) => el("option", { text: t.label, attrs: { value: String(i) } })));
      this.status.textContent = "";
    }
    this.draw();
  }

  /** The keyboard to the first choice of the first score (for the page's `s` key). */
  focus() {
    const first = /** @type {HTMLElement|null} */ (this.rows.querySelector("button[data-choice], input"));
    if (first) first.focus();
    else this.root.focus?.();
  }

  /** @private @returns {Target|null} what the form scores */
  get target() {
    return this.targets[Number(this.choice.value) || 0]?.target || null;
  }

  /** @private */
  draw() {
    this.root.hidden = !this.targets.length;
    if (!this.targets.length) return;
    const focused = focusKey(this.root);
    this.given.replaceChildren(...this.targets.flatMap((t) => this.store.of(t.target).map((s) => this.scoreItem(s, t.label))));
    this.given.hidden = !this.given.firstChild;
    this.choice.closest("label")?.toggleAttribute("hidden", this.targets.length < 2);
    const target = this.target;
    const only = this.only;
    const definitions = only ? this.store.definitions.filter((d) => only.includes(d.name)) : this.store.definitions;
    if (!definitions.length || !target) {
      const text = this.store.loaded
        ? "No score is kept yet: operators add them in the admin (Scores › Score definitions)."
        : "Reading the scores…";
      this.rows.replaceChildren(el("p", { class: "muted", text }));
    } else {
      this.rows.replaceChildren(...definitions.map((d, i) => this.row(d, target, i)));
    }
    restoreFocus(this.root, focused);
  }

  /** @private @param {Score} score @param {string} on */
  scoreItem(score, on) {
    const source = SOURCE_TEXT[score.source] ?? score.source;
    const by = `${score.author || "someone"}${source ? ` (${source})` : ""}`;
    const value = typeof score.value === "number" ? formatNumber(score.value) : String(score.value);
    const item = el("li", {
      class: `score-item${value === "no" ? " score-no" : ""}`,
      attrs: { "data-score-id": String(score.id), "data-score-name": score.name },
      children: [
        el("span", { class: "score-name", text: score.name }),
        el("span", { class: "score-value", text: value }),
        el("span", { class: "muted", text: `${by} · ${on}` }),
        score.comment ? el("q", { class: "score-comment", text: score.comment }) : null,
      ],
    });
    if (score.mine || this.operator) {
      item.append(el("button", { class: "link", text: "Take back", attrs: { type: "button", "data-remove": String(score.id) } }));
    }
    return item;
  }

  /**
   * A definition's row: its choices, the reader's current one pressed.
   *
   * @private @param {Definition} definition @param {Target} target @param {number} index
   */
  row(definition, target, index) {
    const mine = this.store.mineOf(target, definition.name);
    const said = mine ? String(mine.value) : null;
    /** @type {HTMLElement[]} */
    let choices;
    if (definition.kind === "number") {
      const input = el("input", {
        attrs: {
          type: "number", step: "any", min: String(definition.minimum ?? ""), max: String(definition.maximum ?? ""),
          value: said ?? "", "aria-label": `${definition.name}, from ${definition.minimum} to ${definition.maximum}`,
          "data-number": definition.name,
        },
      });
      choices = [input, el("button", { text: "Save", attrs: { type: "button", "data-choice": "", "data-save": definition.name } })];
    } else {
      const values = definition.kind === "boolean" ? ["yes", "no"] : definition.categories;
      choices = values.map((value, i) =>
        el("button", {
          class: "score-choice",
          text: value,
          attrs: {
            type: "button", "data-choice": value, "aria-pressed": String(said === value),
            title: i < 9 ? `${value} (${i + 1})` : value,
          },
        }),
      );
    }
    return el("div", {
      class: "score-row",
      attrs: { role: "group", "aria-label": definition.name, "data-score-name": definition.name, "data-index": String(index) },
      children: [
        el("span", { class: "score-name", text: definition.name, attrs: { title: definition.description || definition.name } }),
        el("span", { class: "score-choices", children: choices }),
      ],
    });
  }

  /** @private @param {Event} event */
  async clicked(event) {
    const button = /** @type {HTMLElement} */ (event.target).closest("button");
    if (!button) return;
    const remove = button.dataset.remove;
    if (remove) {
      this.said(await this.store.remove(Number(remove)), "Taken back.");
      return;
    }
    const row = /** @type {HTMLElement|null} */ (button.closest(".score-row"));
    const target = this.target;
    if (!row || !target || button.dataset.choice === undefined) return;
    const name = row.dataset.scoreName || "";
    /** @type {string|number} */
    let value = button.dataset.choice || "";
    if (button.dataset.save !== undefined) {
      const input = /** @type {HTMLInputElement} */ (row.querySelector("input[data-number]"));
      value = Number(input.value);
      const low = Number(input.min);
      const high = Number(input.max);
      if (input.value.trim() === "" || !Number.isFinite(value)) {
        this.said(`${name} is a number`, "");
        return;
      }
      if (input.min !== "" && input.max !== "" && !(low <= value && value <= high)) {
        this.said(`${name} is from ${low} to ${high}`, ""); // the server says so too
        return;
      }
    }
    this.said(await this.store.give(target, name, value, this.comment.value.trim()), `Saved: ${name} ${value}.`);
  }

  /** @private Digits press a row's choices; Enter in a number saves it. @param {KeyboardEvent} event */
  key(event) {
    const target = /** @type {HTMLElement} */ (event.target);
    const row = target.closest(".score-row");
    if (!row || event.ctrlKey || event.altKey || event.metaKey) return;
    if (target.tagName === "INPUT") {
      if (event.key !== "Enter") return;
      event.preventDefault();
      /** @type {HTMLElement|null} */ (row.querySelector("button[data-save]"))?.click();
      return;
    }
    if (!/^[1-9]$/.test(event.key)) return;
    const choice = /** @type {HTMLElement|undefined} */ ([...row.querySelectorAll("button.score-choice")][Number(event.key) - 1]);
    if (!choice) return;
    event.preventDefault();
    event.stopPropagation();
    choice.focus();
    choice.click();
  }

  /** @private @param {string} problem @param {string} done */
  said(problem, done) {
    this.status.textContent = problem ? `Not saved: ${problem}` : done;
    this.status.classList.toggle("error", Boolean(problem));
  }
}

/** @param {number} value */
function formatNumber(value) {
  return Number.isInteger(value) ? String(value) : value.toFixed(2).replace(/0+$/, "");
}

/**
 * The focused part of a row (its row, its choice — or the number being typed), to focus
 * again after a redraw.
 *
 * @param {HTMLElement} root
 * @returns {{row: string, choice: string|null, typed: string|null}|null}
 */
function focusKey(root) {
  const active = /** @type {HTMLElement|null} */ (document.activeElement);
  const row = /** @type {HTMLElement|null} */ (active && root.contains(active) ? active.closest(".score-row") : null);
  if (!active || !row) return null;
  const typed = active.tagName === "INPUT" ? /** @type {HTMLInputElement} */ (active).value : null;
  return { row: row.dataset.scoreName || "", choice: active.dataset.choice ?? null, typed };
}

/** @param {HTMLElement} root @param {ReturnType<typeof focusKey>} key */
function restoreFocus(root, key) {
  if (!key) return;
  for (const row of root.querySelectorAll(".score-row")) {
    if (/** @type {HTMLElement} */ (row).dataset.scoreName !== key.row) continue;
    const parts = /** @type {HTMLElement[]} */ ([...row.querySelectorAll("button[data-choice], input")]);
    const found = parts.find((p) => (key.typed !== null ? p.tagName === "INPUT" : p.dataset.choice === key.choice));
    if (found && key.typed !== null) /** @type {HTMLInputElement} */ (found).value = key.typed;
    found?.focus();
  }
}
