/**
 * The chat's thumbs (docs/SCORES.md): under each answer — an agent's bubble of a stored
 * invocation — a thumbs up and a thumbs down that score the run that answered
 * (`user_feedback`, by its invocation); a thumbs down offers a comment box. Clicking again
 * changes the score (one per person and answer); what the reader gave before is shown
 * pressed when the page loads. Bubbles drawn later (new answers, older pages) get their
 * buttons as they come.
 *
 * @module dashboard/chat_feedback
 */

import { el } from "../../../core/js/dom.js";
import { postJson } from "../scores/score_store.js";

const FEEDBACK = "user_feedback";

/**
 * @param {object} options
 * @param {HTMLElement} options.list the chat's messages
 * @param {string} options.url the session's scores (`/sessions/<id>/scores/`)
 * @param {import("../scores/score_store.js").ScoreStore} options.store the page's scores (read once for the page)
 */
export function setupFeedback({ list, url, store }) {
  /** @type {Map<string, {up: boolean, comment: string}>} invocation → what the reader said */
  const given = new Map();
  const draw = () => drawBars(list, given);
  /** @type {Send} */
  const send = async (invocation, up, comment) => {
    const problem = await post(url, invocation, up, comment);
    if (!problem) {
      given.set(invocation, { up, comment });
      draw();
    }
    return problem;
  };
  list.addEventListener("click", async (event) => {
    const choice = /** @type {HTMLElement} */ (event.target).closest("button[data-feedback]");
    const bubble = choice?.closest(".msg-agent");
    const invocation = /** @type {HTMLElement|null} */ (bubble)?.dataset.invocationId;
    if (!choice || !bubble || !invocation) return;
    const up = /** @type {HTMLElement} */ (choice).dataset.feedback === "up";
    const problem = await send(invocation, up, "");
    const bar = /** @type {HTMLElement} */ (choice.parentElement);
    bar.querySelector(".feedback-note")?.remove();
    if (problem) bar.append(el("span", { class: "feedback-note error", text: `Not saved: ${problem}` }));
    else if (!up) bar.append(commentBox(invocation, send));
  });
  new MutationObserver(draw).observe(list, { childList: true, subtree: true });
  // What the reader gave before, as the page's scores say it (read once, then live).
  store.on(() => {
    for (const score of store.scores.values()) {
      if (score.name === FEEDBACK && score.mine && score.invocation_id) {
        given.set(score.invocation_id, { up: score.value === "yes", comment: score.comment });
      }
    }
    draw();
  });
  draw();
}

/** @typedef {(invocation: string, up: boolean, comment: string) => Promise<string>} Send */

/**
 * The thumbs under every answer drawn (added where missing), pressed as the reader said.
 *
 * @param {HTMLElement} list @param {Map<string, {up: boolean}>} given
 */
function drawBars(list, given) {
  for (const bubble of list.querySelectorAll(".msg-agent:not(.streaming)")) {
    const invocation = /** @type {HTMLElement} */ (bubble).dataset.invocationId || "";
    if (!invocation) continue;
    let bar = bubble.querySelector(":scope > .msg-feedback");
    if (!bar) {
      bar = el("div", {
        class: "msg-feedback",
        attrs: { role: "group", "aria-label": "Was this answer good?" },
        children: [button("up", "▲", "A good answer"), button("down", "▼", "A bad answer")],
      });
      bubble.append(bar);
    }
    const said = given.get(invocation);
    for (const choice of bar.querySelectorAll("button[data-feedback]")) {
      const up = /** @type {HTMLElement} */ (choice).dataset.feedback === "up";
      const pressed = String(Boolean(said) && said?.up === up);
      if (choice.getAttribute("aria-pressed") !== pressed) choice.setAttribute("aria-pressed", pressed);
    }
  }
}

/**
 * The reader's thumbs on the run of ``invocation``, with ``comment``.
 *
 * @param {string} url @param {string} invocation @param {boolean} up @param {string} comment
 * @returns {Promise<string>} "" when it was stored, else what went wrong
 */
async function post(url, invocation, up, comment) {
  const body = { name: FEEDBACK, value: up, target: "run", invocation_id: invocation, source: "end_user", comment };
  return (await postJson(url, body)).problem;
}

/** @param {string} choice @param {string} text @param {string} label */
function button(choice, text, label) {
  return el("button", {
    class: "feedback-button",
    text,
    attrs: { type: "button", "data-feedback": choice, "aria-pressed": "false", "aria-label": label, title: label },
  });
}

/**
 * What went wrong, said in words (optional): sent as the thumbs down's comment.
 *
 * @param {string} invocation
 * @param {Send} send
 */
function commentBox(invocation, send) {
  const input = el("input", {
    attrs: { type: "text", maxlength: "2000", placeholder: "What was wrong? (optional)", "aria-label": "What was wrong with this answer" },
  });
  const box = el("form", { class: "feedback-note feedback-comment", children: [input, el("button", { text: "Send", attrs: { type: "submit" } })] });
  box.addEventListener("submit", async (event) => {
    event.preventDefault();
    const problem = await send(invocation, false, /** @type {HTMLInputElement} */ (input).value.trim());
    box.replaceWith(el("span", { class: `feedback-note${problem ? " error" : " muted"}`, text: problem ? `Not saved: ${problem}` : "Thank you." }));
  });
  return box;
}
