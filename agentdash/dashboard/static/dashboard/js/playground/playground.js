/**
 * The playground's Run, streamed (docs/PLAYGROUND.md): the answer's text shows as the model
 * sends it, set as text; once the run is kept the page opens it, its comparison with the
 * original drawn by the server. Without this script, or when an answer cannot be streamed
 * (the payload is refused, the connection fails before it starts), the form posts as it is
 * and the page comes back with the run or says what is wrong.
 *
 * @module dashboard/playground
 */

import { el, replaceChildren } from "../../../core/js/dom.js";

/**
 * @typedef {object} Said one line of the streamed answer
 * @property {string} [text] the next piece of the answer
 * @property {number} [run] the run, kept (last)
 * @property {string} [url] where it shows
 * @property {string} [error] the model's failure, if it failed
 */

const NDJSON = "application/x-ndjson";

function main() {
  const form = /** @type {HTMLFormElement|null} */ (document.querySelector(".playground-form"));
  const side = /** @type {HTMLElement|null} */ (document.querySelector('.pg-side[data-side="run"]'));
  if (!form || !side || typeof TextDecoderStream === "undefined") return;
  form.addEventListener("submit", (event) => {
    const button = event.submitter;
    if (!(button instanceof HTMLButtonElement) || button.value !== "run" || form.dataset.plain) return;
    event.preventDefault();
    stream(form, side, button);
  });
}

/**
 * @param {HTMLFormElement} form @param {HTMLElement} side @param {HTMLButtonElement} button
 */
async function stream(form, side, button) {
  const data = new FormData(form, button);
  data.set("stream", "1");
  button.disabled = true;
  const status = el("p", { class: "small muted pg-status", attrs: { role: "status" }, text: "Sent: waiting for the model…" });
  const text = el("p", { class: "instruction-text words pg-text pg-streaming" });
  replaceChildren(side, el("h3", { text: "This run" }), status, text);
  status.scrollIntoView({ block: "nearest" }); // the answer in view as it comes
  /** @type {Response} */
  let response;
  try {
    // (Not form.action: the form's field named "action" shadows it.)
    const target = form.getAttribute("action") || location.href;
    response = await fetch(target, { method: "POST", body: data, headers: { Accept: NDJSON } });
  } catch {
    return plain(form);
  }
  if (!response.ok || !response.body || !(response.headers.get("Content-Type") || "").startsWith(NDJSON)) {
    return plain(form); // refused: the page, posted as it is, says why
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      for (let end = buffer.indexOf("\n"); end >= 0; end = buffer.indexOf("\n")) {
        const said = /** @type {Said} */ (JSON.parse(buffer.slice(0, end)));
        buffer = buffer.slice(end + 1);
        if (said.text !== undefined) {
          text.append(said.text);
          status.textContent = "Answering…";
        }
        if (said.url) {
          status.textContent = said.error ? "The model failed: opening the run…" : "Done: opening the run…";
          location.assign(said.url);
          return;
        }
      }
    }
  } catch {
    // the connection broke mid-answer: said below
  }
  status.textContent = "The answer stopped before its end (the connection broke): run it again.";
  status.classList.replace("muted", "error");
  button.disabled = false;
}

/** Post the form as it is (the page that comes back shows the run, or what is wrong). @param {HTMLFormElement} form */
function plain(form) {
  form.dataset.plain = "1";
  form.append(el("input", { attrs: { type: "hidden", name: "action", value: "run" } }));
  form.submit();
}

main();
