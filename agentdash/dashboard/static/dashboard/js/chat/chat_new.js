/**
 * "New chat": the first message starts the session. Enter sends it (Shift+Enter starts a new
 * line) and the form is sent once; the server answers with the session's page.
 *
 * @module dashboard/chat_new
 */

const form = /** @type {HTMLFormElement} */ (document.getElementById("new-chat-form"));
const text = /** @type {HTMLTextAreaElement} */ (document.getElementById("composer-text"));
const send = /** @type {HTMLButtonElement} */ (document.getElementById("composer-send"));

function update() {
  send.disabled = form.dataset.sending === "true" || !text.value.trim();
}

text.addEventListener("input", update);
text.addEventListener("keydown", (event) => {
  if (event.key !== "Enter" || event.shiftKey || event.isComposing) return;
  event.preventDefault();
  if (!send.disabled) form.requestSubmit(send);
});
form.addEventListener("submit", (event) => {
  if (form.dataset.sending === "true" || !text.value.trim()) {
    event.preventDefault();
    return;
  }
  // The form's data is read after this event: a read-only textarea is still sent.
  form.dataset.sending = "true";
  text.readOnly = true;
  update();
});
// Back on this page from the session's (the back/forward cache): its token has started a
// session already, so a fresh page (a new token) is needed for another chat.
window.addEventListener("pageshow", (event) => {
  if (event.persisted) window.location.reload();
});
update();
