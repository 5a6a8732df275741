/**
 * Operator controls (rendered for operators only; the server checks every request again):
 * callback switches, the state editor, and cancelling runs.
 *
 * Requests go over the live socket (docs/PROTOCOL.md): `callback.toggle`, `state.edit` (with
 * the version the edit is based on; a `conflict` error shows the current values) and
 * `run.cancel`. Each request carries an id of its own (`req`); its answer, `ack` or `error`,
 * carries it back, and the handler waiting under that id takes it, whatever the order.
 *
 * @module dashboard/controls
 */

import { el } from "../../../core/js/dom.js";
import { formatInline, formatJson } from "../common/format.js";
import { callbackItem, errorText, runItem } from "./controls_items.js";

let requests = 0; // the ids of this page's requests (`req`), one count for every panel
const UNAVAILABLE_TRIES = 4;
const UNAVAILABLE_PAUSE_MS = 750;
// A request unanswered this long is given up, saying so (the answer to it, should it come
// after all, is then ignored): a lost answer must not leave a switch disabled for good.
const ANSWER_WAIT_MS = 30_000;

/**
 * @typedef {object} CallbackSwitch  one entry of the page data's `callbacks`
 * @property {string} agent
 * @property {string} slot
 * @property {string} name
 * @property {string} style "adk", "any-agent" or "built-in"
 * @property {boolean|null} global the global switch, null when unset
 * @property {boolean|null} session this session's switch, null when unset
 */

/** @typedef {(ok: boolean, answer: any) => void} AnswerHandler  answer: the server's, as sent */
/** @typedef {import("../chat/chat_runs.js").Run} Run */

export class Controls {
  /**
   * @param {object} parts
   * @param {HTMLElement} parts.root the controls panel
   * @param {any} parts.data the page data (`callbacks`, `state`, `version`, …), as sent
   * @param {(message: object) => boolean} parts.send sends one message; false when offline
   */
  constructor({ root, data, send }) {
    this.root = root;
    this.send = send;
    this.reason = /** @type {HTMLInputElement} */ (this.part("control-reason"));
    /** a cancel's own reason (it used to take the switches' one without saying so) */
    this.cancelReason = /** @type {HTMLInputElement} */ (this.part("cancel-reason"));
    /** @type {Map<string, {type: string, onAnswer: AnswerHandler, timer: ReturnType<typeof setTimeout>}>} waiting, by request id */
    this.waiting = new Map();
    /** @type {Map<string, HTMLElement>} the runs list's items, by run id */
    this.runs = new Map();
    this.state = data.state && typeof data.state === "object" ? stateRecord(data.state) : null;
    this.version = typeof data.version === "number" ? data.version : 0;
    /** the version the state was read at; `keyAt`: the version of each value written since */
    this.loadedAt = this.version;
    /** @type {Map<string, number>} */
    this.keyAt = new Map();
    /** @type {{key: string, version: number}|null} the last edit saved, for its message */
    this.lastSave = null;
    /** @type {Map<string, {cb: CallbackSwitch, sync: () => void}>} by "agent|name" */
    this.switches = new Map();
    this.toggles = 0; // how many switches this page has sent (see loadCallbacks)
    this.renderCallbacks(Array.isArray(data.callbacks) ? data.callbacks : []);
    this.setupStateEditor();
    this.renderState();
  }

  /**
   * An `ack` or an `error` for one of our requests.
   *
   * @param {{type: string, req?: string}} message
   * @returns {boolean} whether it answered a request of ours
   */
  answer(message) {
    const waiting = message.req ? this.waiting.get(message.req) : undefined;
    if (!waiting || !message.req) return false;
    this.waiting.delete(message.req);
    clearTimeout(waiting.timer);
    waiting.onAnswer(message.type === "ack", message);
    return true;
  }

  /**
   * The socket closed: no answer can come to what was asked on it. Each request still
   * waiting hears so (the change may or may not have been made: the page shows what is
   * stored once it is back).
   */
  connectionLost() {
    const text = "the connection dropped before the server answered: the change may or may"
      + " not have been made (the page shows what is stored once it is back)";
    for (const req of [...this.waiting.keys()]) this.giveUp(req, "disconnected", text);
  }

  /** @private @param {string} req @param {string} code @param {string} text */
  giveUp(req, code, text) {
    const waiting = this.waiting.get(req);
    if (!waiting) return;
    this.waiting.delete(req);
    clearTimeout(waiting.timer);
    waiting.onAnswer(false, { type: "error", code, message: text, req });
  }

  /**
   * A `run` change: the runs list, newest first, with Cancel on queued and running runs.
   *
   * @param {Run} run
   */
  applyRun(run) {
    const id = String(run.id);
    const item = runItem(run, this);
    const seen = this.runs.get(id);
    this.runs.set(id, item);
    if (seen) {
      seen.replaceWith(item); // one run redrawn, not the list
    } else {
      // Newest first: runs arrive in id order, so a new one goes before the first with a
      // smaller id (at the top, almost always).
      const list = this.part("runs");
      let before = list.firstElementChild;
      while (before && Number(before.getAttribute("data-run-id")) > Number(run.id)) {
        before = before.nextElementSibling;
      }
      list.insertBefore(item, before);
    }
    this.part("runs-empty").hidden = true;
  }

  /**
   * `callback.changed`: a switch changed somewhere (another tab, another operator, the
   * admin). `session_id` null is the global switch; `enabled` null a cleared one.
   *
   * @param {{agent_name: string, callback_name: string, session_id: string|null,
   *   enabled: boolean|null}} setting
   */
  applySwitch(setting) {
    const found = this.switches.get(`${setting.agent_name}|${setting.callback_name}`);
    if (!found || !setting || typeof setting !== "object") return;
    const value = typeof setting.enabled === "boolean" ? setting.enabled : null;
    found.cb[setting.session_id === null ? "global" : "session"] = value;
    found.sync();
  }

  /**
   * The switches from a fresh read (the snapshot, each time the page is back live:
   * `callback.changed` is not replayed). The same callbacks are brought up to date where they
   * are drawn: a switch under the pointer or holding the focus stays the same element. A read
   * begun before one of this page's own switches (`mark`: `toggles` then) is older than that
   * switch's answer and is dropped, as it is while a switch is still waiting.
   *
   * @param {CallbackSwitch[]} callbacks @param {number} [mark]
   */
  loadCallbacks(callbacks, mark = this.toggles) {
    const toggling = [...this.waiting.values()].some((w) => w.type === "callback.toggle");
    if (!Array.isArray(callbacks) || toggling || mark !== this.toggles) return;
    const keys = callbacks.map((cb) => `${cb.agent}|${cb.name}`);
    const same = keys.length === this.switches.size && keys.every((key) => this.switches.has(key));
    if (!same) {
      this.switches.clear();
      return this.renderCallbacks(callbacks);
    }
    callbacks.forEach((cb, i) => {
      const found = /** @type {{cb: CallbackSwitch, sync: () => void}} */ (this.switches.get(keys[i]));
      found.cb.global = cb.global;
      found.cb.session = cb.session;
      found.sync();
    });
  }

  /**
   * Replace the state with a fresh read (the snapshot the page starts from).
   *
   * @param {object} state @param {number} version
   */
  loadState(state, version) {
    if (!this.state || !state || typeof state !== "object") return;
    if (typeof version !== "number" || version <= this.version) return; // not newer than ours
    this.state = stateRecord(state);
    this.version = version;
    this.loadedAt = version;
    this.keyAt.clear();
    this.renderState();
  }

  /** A `state` change: the session state after an edit. @param {{version?: unknown, delta?: object}} change */
  applyState(change) {
    this.seeVersion(change.version);
    this.mergeDelta(change.delta, change.version);
  }

  /**
   * A stored event: agents' state writes show in the state table too; its `version` is the
   * session's version after it, what the next edit is based on.
   */
  applyEvent(/** @type {{version?: unknown, state_delta?: object}} */ event) {
    this.seeVersion(event.version);
    this.mergeDelta(event.state_delta, event.version);
  }

  /** @private @param {string} id */
  part(id) {
    return /** @type {HTMLElement} */ (this.root.querySelector(`#${id}`));
  }

  /** @private @param {unknown} version */
  seeVersion(version) {
    if (typeof version !== "number" || version <= this.version) return;
    this.version = version;
    this.renderState();
  }

  /**
   * @private Lay `delta`, written at `version`, over the state key by key: a key keeps a value
   * from a newer write. Writes can come out of order: an edit's answer travels apart from the
   * session's changes, and the replay after a snapshot may hold writes the snapshot has.
   *
   * @param {object|undefined} delta @param {unknown} [version]
   */
  mergeDelta(delta, version) {
    if (!this.state || !delta || typeof delta !== "object" || !Object.keys(delta).length) return;
    for (const [key, value] of Object.entries(delta)) {
      if (typeof version === "number") {
        if (version <= (this.keyAt.get(key) ?? this.loadedAt)) continue; // older than shown
        this.keyAt.set(key, version);
      }
      this.state[key] = value;
    }
    this.renderState();
  }

  /**
   * The reason in `input` (the switches' shared one unless given), or null (saying so, the
   * field focused) when it is empty. (This and the next two serve the panel's parts.)
   * @param {string} statusId
   * @param {HTMLInputElement} [input]
   * @returns {string|null}
   */
  requireReason(statusId, input = this.reason) {
    const reason = input.value.trim();
    if (reason) return reason;
    const where = input === this.reason ? "Give a reason first" : "Say why first (under the runs)";
    this.status(statusId, `${where}: every change is audited with it.`, "error");
    input.focus();
    return null;
  }

  /**
   * Send a request and queue the handler of its answer. An `unavailable` answer (the
   * database was busy or away: nothing was changed, the server says) is asked again shortly,
   * a few times, before the handler hears of it.
   *
   * @param {{type: string} & Record<string, unknown>} message
   * @param {AnswerHandler} onAnswer
   * @param {number} [tries] how many times to ask while the answer is `unavailable`
   * @returns {boolean} false when the socket is not connected (nothing sent, nothing queued)
   */
  request(message, onAnswer, tries = UNAVAILABLE_TRIES) {
    const req = `controls-${++requests}`;
    if (!this.send({ ...message, req })) return false;
    /** @type {AnswerHandler} */
    const answered = (ok, answer) => {
      if (ok || answer?.code !== "unavailable" || tries <= 1) return onAnswer(ok, answer);
      setTimeout(() => {
        if (!this.request(message, onAnswer, tries - 1)) onAnswer(false, answer);
      }, UNAVAILABLE_PAUSE_MS);
    };
    const text = `no answer from the server in ${ANSWER_WAIT_MS / 1000} s: the change may or`
      + " may not have been made (reload to see what is stored)";
    const timer = setTimeout(() => this.giveUp(req, "no_answer", text), ANSWER_WAIT_MS);
    this.waiting.set(req, { type: message.type, onAnswer: answered, timer });
    return true;
  }

  /** A status line under a block: "" (neutral), "ok" or "error". */
  status(/** @type {string} */ id, /** @type {string} */ text, kind = "") {
    const node = this.part(id);
    node.textContent = text;
    node.dataset.kind = kind;
  }

  // ── callback switches ────────────────────────────────────────────────────────────────

  /** @private @param {CallbackSwitch[]} callbacks */
  renderCallbacks(callbacks) {
    this.part("callbacks").replaceChildren(...callbacks.map((cb) => callbackItem(cb, this)));
    this.part("callbacks-empty").hidden = callbacks.length > 0;
  }

  // ── state editor ─────────────────────────────────────────────────────────────────────

  /** @private Key + JSON value + reason → `state.edit` at the version this page knows. */
  setupStateEditor() {
    const form = /** @type {HTMLFormElement|null} */ (this.root.querySelector("#state-form"));
    if (!form) return;
    const field = (/** @type {string} */ name) => /** @type {HTMLInputElement} */ (form.elements.namedItem(name));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const key = field("key").value.trim();
      const reason = field("reason").value.trim();
      if (!key) return this.status("state-status", "Which key?", "error");
      if (!reason) return this.status("state-status", "Give a reason: edits are audited.", "error");
      let value;
      try {
        value = JSON.parse(field("value").value);
      } catch (/** @type {any} */ error) {
        return this.status("state-status", `The value is not JSON: ${error.message}`, "error");
      }
      const delta = { [key]: value };
      const message = { type: "state.edit", delta, expected_version: this.version, reason };
      const sent = this.request(message, (ok, answer) => {
        this.part("state-conflict").replaceChildren();
        if (!ok) return this.showConflict(answer);
        this.stateSaved(key, delta, answer.version);
        field("reason").value = "";
      });
      if (!sent) return this.status("state-status", "Not connected: nothing was saved.", "error");
      this.status("state-status", `Saving ${key}…`);
    });
  }

  /**
   * @private The `ack` of an edit: it was stored as `version`. The answer travels apart from
   * the session's changes, so the edit's own event and later ones may have come first; the
   * page may then be past `version` already. The message names the version the edit made,
   * and says so when the state has moved on since (the header shows the current one); the
   * table keeps any newer value of the key.
   *
   * @param {string} key @param {object} delta @param {unknown} version
   */
  stateSaved(key, delta, version) {
    this.seeVersion(version);
    this.mergeDelta(delta, version);
    this.lastSave = { key, version: typeof version === "number" ? version : this.version };
    this.showSaved();
  }

  /** @private The saved message, kept true as the version moves on. */
  showSaved() {
    if (!this.lastSave) return;
    const { key, version } = this.lastSave;
    const since = this.version > version ? `; changed since (now v${this.version})` : "";
    this.status("state-status", `Saved ${key} as v${version}${since}.`, "ok");
  }

  /** @private An `error` answer to `state.edit`; a conflict shows the current values. */
  showConflict(/** @type {any} */ answer) {
    this.status("state-status", errorText(answer), "error");
    const current = answer.current ?? answer.values ?? answer.conflicts;
    const box = this.part("state-conflict");
    if (answer.code !== "conflict" || current === undefined) return box.replaceChildren();
    this.seeVersion(answer.version ?? current?.version);
    box.replaceChildren(
      el("p", { text: "Someone changed this meanwhile. Current values:" }),
      el("pre", { class: "json", text: formatJson(current) }),
    );
  }

  /** @private The state as a key/value table; clicking a row loads it into the form. */
  renderState() {
    const table = this.root.querySelector("#state-table");
    if (!table || !this.state) return;
    const form = /** @type {HTMLFormElement} */ (this.root.querySelector("#state-form"));
    const field = (/** @type {string} */ name) => /** @type {HTMLInputElement} */ (form.elements.namedItem(name));
    const keys = Object.keys(this.state).sort();
    const rows = keys.map((key) => {
      const row = el("tr", {
        attrs: { tabindex: "0", title: "Edit this key" },
        children: [
          el("th", { text: key, attrs: { scope: "row", title: key } }),
          el("td", { children: [el("code", { text: formatInline(/** @type {Record<string, unknown>} */ (this.state)[key]) })] }),
        ],
      });
      row.addEventListener("click", () => {
        field("key").value = key;
        field("value").value = JSON.stringify(/** @type {Record<string, unknown>} */ (this.state)[key], null, 2);
        field("value").focus();
      });
      return row;
    });
    table.replaceChildren(el("tbody", { children: rows }));
    this.part("state-version").textContent = `v${this.version}`;
    if (this.part("state-status").dataset.kind === "ok") this.showSaved();
    this.part("state-empty").hidden = keys.length > 0;
    const options = keys.map((key) => el("option", { attrs: { value: key } }));
    this.part("state-keys").replaceChildren(...options);
  }
}

/**
 * The session state as the page keeps it: an object without a prototype, so that every key
 * is a key like the others — an agent's or an operator's `__proto__` or `constructor` too
 * (assigned to a plain object, `__proto__` would replace its prototype and never show).
 *
 * @param {object} source
 * @returns {Record<string, unknown>}
 */
function stateRecord(source) {
  return Object.assign(Object.create(null), source);
}
