/**
 * The sessions list: renaming in place, rows kept current (sessions_live.js), their times
 * shown again when rows change (core/js/times.js). Titles are text: set with textContent only. (Filters apply with their Filter button or Enter, never while a
 * choice is being made: a keyboard's arrows change a select's value one step at a time.)
 *
 * @module dashboard/home
 */

import { showTimes } from "../../../core/js/times.js";
import { keepListCurrent } from "./sessions_live.js";

/**
 * @param {HTMLTableRowElement} row
 * @param {boolean} editing
 */
function setEditing(row, editing) {
  const form = /** @type {HTMLFormElement|null} */ (row.querySelector(".rename-form"));
  const link = /** @type {HTMLElement|null} */ (row.querySelector(".session-title"));
  if (!form || !link) return;
  form.hidden = !editing;
  link.hidden = editing;
  row.classList.toggle("renaming", editing);
  const input = /** @type {HTMLInputElement} */ (form.elements.namedItem("title"));
  if (editing) {
    input.value = link.classList.contains("untitled") ? "" : link.textContent || "";
    input.focus();
    input.select();
  }
  const error = form.querySelector(".rename-error");
  if (error instanceof HTMLElement) error.hidden = true;
}

/**
 * @param {HTMLFormElement} form
 * @returns {Promise<void>}
 */
async function rename(form) {
  const row = /** @type {HTMLTableRowElement} */ (form.closest("tr"));
  const error = /** @type {HTMLElement} */ (form.querySelector(".rename-error"));
  const link = /** @type {HTMLElement} */ (row.querySelector(".session-title"));
  const buttons = form.querySelectorAll("button");
  buttons.forEach((b) => (b.disabled = true));
  try {
    const response = await fetch(form.action, {
      method: "POST",
      body: new FormData(form),
      headers: { Accept: "application/json" },
      credentials: "same-origin",
    });
    const answer = await response.json().catch(() => ({}));
    if (!response.ok || typeof answer.title !== "string") {
      error.textContent = answer.error || `Could not rename (HTTP ${response.status}).`;
      error.hidden = false;
      return;
    }
    link.textContent = answer.title;
    link.classList.remove("untitled");
    setEditing(row, false);
    link.focus();
  } catch {
    error.textContent = "Could not rename: the server did not answer.";
    error.hidden = false;
  } finally {
    buttons.forEach((b) => (b.disabled = false));
  }
}

document.addEventListener("click", (event) => {
  const target = /** @type {Element} */ (event.target);
  const row = /** @type {HTMLTableRowElement|null} */ (target.closest("tr.session-row"));
  if (!row) return;
  if (target.closest(".rename-link")) {
    event.preventDefault();
    setEditing(row, true);
  } else if (target.closest(".rename-cancel")) {
    setEditing(row, false);
    /** @type {HTMLElement|null} */ (row.querySelector(".session-title"))?.focus();
  }
});

document.addEventListener("keydown", (event) => {
  const target = /** @type {Element} */ (event.target);
  const row = /** @type {HTMLTableRowElement|null} */ (target.closest("tr.renaming"));
  if (row && event.key === "Escape") {
    setEditing(row, false);
    /** @type {HTMLElement|null} */ (row.querySelector(".session-title"))?.focus();
  }
});

document.addEventListener("submit", (event) => {
  const form = /** @type {HTMLFormElement} */ (event.target);
  if (!form.classList.contains("rename-form")) return;
  event.preventDefault();
  void rename(form);
});

const card = document.querySelector(".sessions-card");
const news = document.querySelector("#list-news");
const indicator = document.querySelector("#list-live");
if (card instanceof HTMLElement && news instanceof HTMLElement && indicator instanceof HTMLElement) {
  keepListCurrent({ card, news, indicator, onUpdated: showTimes });
}
