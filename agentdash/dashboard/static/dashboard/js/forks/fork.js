/**
 * "Fork here" on every stored event of the chat, the fork form, and a fork's Replay button
 * (agentdash/dashboard/forks/views.py; docs/PROTOCOL.md, "Forks and replays").
 *
 * The page's own entry point, beside session.js: it watches the chat's list and gives each
 * event node (`[data-event-id]`) a small button; the button carries no event id itself, so
 * the chat's own queries of event nodes never see it. State values and callback names are
 * untrusted: they reach the page as `value` and `textContent` only.
 *
 * @module dashboard/fork
 */

import { el } from "../../../core/js/dom.js";

const JSON_HEADERS = { Accept: "application/json" };

/** @param {string} id */
const byId = (id) => document.getElementById(id);

/**
 * The error message an answer carries, or a fallback.
 *
 * @param {any} answer
 * @param {Response} response
 * @returns {string}
 */
function problemOf(answer, response) {
  const error = answer && answer.error;
  if (error && typeof error.message === "string") {
    return error.field ? `${error.field}: ${error.message}` : error.message;
  }
  return `The server said ${response.status}.`;
}

/**
 * POST `body` to `url` asking for JSON; the answer's JSON (or {}) and the response.
 *
 * @param {string} url
 * @param {FormData} body
 * @returns {Promise<{answer: any, response: Response}>}
 */
async function post(url, body) {
  const response = await fetch(url, {
    method: "POST",
    body,
    headers: JSON_HEADERS,
    credentials: "same-origin",
  });
  const answer = await response.json().catch(() => ({}));
  return { answer, response };
}

/**
 * The form's CSRF token, in a FormData of its own (for a second POST).
 *
 * @param {HTMLFormElement} form
 * @returns {FormData}
 */
function tokenOnly(form) {
  const body = new FormData();
  const token = form.querySelector("input[name=csrfmiddlewaretoken]");
  if (token instanceof HTMLInputElement) body.append("csrfmiddlewaretoken", token.value);
  return body;
}

class ForkForm {
  /**
   * @param {HTMLDialogElement} dialog
   * @param {HTMLFormElement} form
   */
  constructor(dialog, form) {
    this.dialog = dialog;
    this.form = form;
    this.event = /** @type {HTMLInputElement} */ (byId("fork-event"));
    this.seq = /** @type {HTMLElement} */ (byId("fork-seq"));
    this.error = /** @type {HTMLElement} */ (byId("fork-error"));
    this.state = /** @type {HTMLTextAreaElement|null} */ (byId("fork-state"));
    this.stateSent = /** @type {HTMLInputElement|null} */ (byId("fork-state-sent"));
    this.switches = /** @type {HTMLElement|null} */ (byId("fork-switch-list"));
    this.switchesEmpty = byId("fork-switches-empty");
    this.switchesSent = /** @type {HTMLInputElement|null} */ (byId("fork-switches-sent"));
    this.stateShown = "";
    this.asked = 0; // the latest open(): answers to older ones are dropped
    form.addEventListener("submit", (e) => this.submit(e));
    form.querySelector("[data-fork-cancel]")?.addEventListener("click", () => dialog.close());
  }

  /**
   * Open the form for one event and fill it from the server.
   *
   * @param {string} eventId
   * @param {string|undefined} seq
   */
  async open(eventId, seq) {
    const asked = ++this.asked;
    this.event.value = eventId;
    this.seq.textContent = seq || "…";
    this.say("");
    if (this.state) this.state.value = this.stateShown = "";
    this.switches?.replaceChildren();
    delete this.dialog.dataset.loaded; // set once the state as of the event is in (or failed)
    this.dialog.showModal();
    try {
      const url = `${this.form.action}?event_id=${encodeURIComponent(eventId)}`;
      const response = await fetch(url, { headers: JSON_HEADERS, credentials: "same-origin" });
      const answer = await response.json().catch(() => ({}));
      if (asked !== this.asked) return;
      if (!response.ok) return this.say(problemOf(answer, response));
      this.seq.textContent = String(answer.seq);
      if (this.state && answer.state) {
        this.state.value = this.stateShown = JSON.stringify(answer.state, null, 2);
      }
      if (this.switches && Array.isArray(answer.switches)) this.showSwitches(answer.switches);
    } catch {
      if (asked === this.asked) this.say("Could not read the state as of this event.");
    } finally {
      if (asked === this.asked) this.dialog.dataset.loaded = "true";
    }
  }

  /** @param {Array<{agent: string, name: string, enabled: boolean}>} switches */
  showSwitches(switches) {
    if (!this.switches) return;
    for (const item of switches) {
      const box = el("input", { attrs: { type: "checkbox", checked: Boolean(item.enabled) } });
      box.dataset.agent = item.agent;
      box.dataset.name = item.name;
      box.dataset.was = item.enabled ? "on" : "off";
      this.switches.append(
        el("li", {
          children: [
            el("label", {
              children: [
                box,
                el("code", { text: item.name }),
                el("span", { class: "muted", text: ` ${item.agent}` }),
              ],
            }),
          ],
        }),
      );
    }
    if (this.switchesEmpty) this.switchesEmpty.hidden = switches.length > 0;
  }

  /** The switches changed in the form, as the server takes them. */
  changedSwitches() {
    if (!this.switches) return [];
    const changed = [];
    for (const box of this.switches.querySelectorAll("input[type=checkbox]")) {
      const input = /** @type {HTMLInputElement} */ (box);
      if (input.checked !== (input.dataset.was === "on")) {
        changed.push({ agent: input.dataset.agent, name: input.dataset.name, enabled: input.checked });
      }
    }
    return changed;
  }

  /** @param {SubmitEvent} e */
  async submit(e) {
    e.preventDefault();
    const replay = /** @type {HTMLButtonElement|null} */ (e.submitter)?.value === "replay";
    // Only what was changed is sent: an untouched editor forks with the state as it was.
    if (this.state && this.stateSent) {
      const edited = this.state.value.trim() !== this.stateShown.trim();
      this.stateSent.value = edited ? this.state.value : "";
    }
    if (this.switchesSent) {
      const changed = this.changedSwitches();
      this.switchesSent.value = changed.length ? JSON.stringify(changed) : "";
    }
    const buttons = this.form.querySelectorAll("button");
    buttons.forEach((b) => (b.disabled = true));
    this.say(replay ? "Forking, then replaying…" : "Forking…", "");
    try {
      const { answer, response } = await post(this.form.action, new FormData(this.form));
      if (response.status !== 201 || typeof answer.url !== "string") {
        return this.say(problemOf(answer, response));
      }
      if (replay) {
        const started = await post(answer.replay_url, tokenOnly(this.form));
        if (started.response.status !== 202) {
          this.say(`Forked, but not replayed: ${problemOf(started.answer, started.response)}`);
          this.form.append(el("a", { class: "fork-open", text: "Open the fork", attrs: { href: answer.url } }));
          return;
        }
      }
      window.location.assign(answer.url);
    } catch {
      this.say("Could not fork: the server did not answer.");
    } finally {
      buttons.forEach((b) => (b.disabled = false));
    }
  }

  /**
   * @param {string} text
   * @param {string} [kind]
   */
  say(text, kind = "error") {
    this.error.textContent = text;
    this.error.dataset.kind = kind;
  }
}

/**
 * Give each event node under `root` (and `root` itself) its "Fork here" button.
 *
 * @param {Node} root
 */
function addButtons(root) {
  if (!(root instanceof HTMLElement)) return;
  const nodes = [...root.querySelectorAll("[data-event-id]")];
  if (root.dataset.eventId) nodes.unshift(root);
  for (const node of nodes) {
    if (node.querySelector(":scope > .fork-here")) continue;
    node.append(
      el("button", {
        class: "fork-here",
        text: "Fork here",
        attrs: { type: "button", title: "Fork a new session from this event" },
      }),
    );
  }
}

/** The fork's Replay button: start it, then say what was queued. */
function setupReplay() {
  const form = /** @type {HTMLFormElement|null} */ (byId("replay-form"));
  const status = byId("replay-status");
  if (!form || !status) return;
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const button = form.querySelector("button");
    if (button) button.disabled = true;
    status.dataset.kind = "";
    status.textContent = "Starting the replay…";
    try {
      const { answer, response } = await post(form.action, new FormData(form));
      if (response.status !== 202) {
        status.dataset.kind = "error";
        status.textContent = problemOf(answer, response);
        return;
      }
      status.dataset.kind = "ok";
      const n = Number(answer.messages) || 0;
      status.textContent = `Replaying ${n} message${n === 1 ? "" : "s"}, one run after another.`;
    } catch {
      status.dataset.kind = "error";
      status.textContent = "Could not start the replay: the server did not answer.";
    } finally {
      if (button) button.disabled = false;
    }
  });
}

function main() {
  setupReplay();
  const dialog = byId("fork-dialog");
  const form = byId("fork-form");
  const messages = byId("messages");
  if (!(dialog instanceof HTMLDialogElement) || !(form instanceof HTMLFormElement) || !messages) {
    return;
  }
  const forkForm = new ForkForm(dialog, form);
  addButtons(messages);
  new MutationObserver((records) => {
    for (const record of records) record.addedNodes.forEach((node) => addButtons(node));
  }).observe(messages, { childList: true, subtree: true });
  messages.addEventListener("click", (e) => {
    const button = /** @type {Element} */ (e.target).closest?.(".fork-here");
    const node = button?.closest("[data-event-id]");
    if (!(node instanceof HTMLElement)) return;
    forkForm.open(node.dataset.eventId || "", node.dataset.seq);
  });
}

main();
