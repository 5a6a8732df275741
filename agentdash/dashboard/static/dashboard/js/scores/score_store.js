/**
 * A session's scores as the page knows them (docs/SCORES.md): read once from the session's
 * scores endpoint, kept current by the socket's `score` changes (a score taken back comes
 * without data: the list is read again), given and taken back over HTTP. Listeners hear of
 * every change. DOM-free but for the CSRF token it sends.
 *
 * @module dashboard/score_store
 */

/**
 * @typedef {object} Score  as the API says it
 * @property {number} id
 * @property {string} name
 * @property {string} kind "boolean" | "number" | "category"
 * @property {string|number} value "yes"/"no", a number, or a category
 * @property {string} target "session" | "run" | "span"
 * @property {number|null} run
 * @property {string} invocation_id
 * @property {string} trace_id
 * @property {string} span_id
 * @property {string} comment
 * @property {string} source "person" | "end_user" | "evaluator" | "api"
 * @property {string} author
 * @property {boolean} [mine] the reader gave it
 */

/**
 * @typedef {object} Definition
 * @property {string} name
 * @property {string} kind
 * @property {string} description
 * @property {number|null} minimum
 * @property {number|null} maximum
 * @property {string[]} categories
 */

/** @typedef {{kind: "session"} | {kind: "run", run: number} | {kind: "span", trace: string, id: string, run?: number|null}} Target */

export class ScoreStore {
  /**
   * @param {object} options
   * @param {string} options.url the session's scores (`/sessions/<id>/scores/`)
   * @param {string} options.me the reader's user name (their live scores are theirs)
   */
  constructor({ url, me }) {
    this.url = url;
    this.me = me;
    /** @type {Definition[]} */
    this.definitions = [];
    /** @type {Map<number, Score>} */
    this.scores = new Map();
    /** @type {(() => void)[]} */
    this.listeners = [];
    this.loaded = false;
    /** @type {Set<Promise<unknown>>} scores being given or taken back */
    this.pending = new Set();
  }

  /** @returns {Promise<unknown>} settled once every score being sent has its answer */
  settled() {
    return Promise.allSettled([...this.pending]);
  }

  /** @private @template T @param {Promise<T>} promise @returns {Promise<T>} */
  track(promise) {
    this.pending.add(promise);
    promise.finally(() => this.pending.delete(promise));
    return promise;
  }

  /** @param {() => void} listener called after every change */
  on(listener) {
    this.listeners.push(listener);
  }

  /** Read the definitions and the session's scores (again). */
  async load() {
    const answer = await fetch(this.url, { credentials: "same-origin" }).catch(() => null);
    if (!answer || !answer.ok) return;
    const found = await answer.json().catch(() => null);
    if (!found) return;
    this.definitions = found.definitions || [];
    this.scores = new Map((found.scores || []).map((/** @type {Score} */ s) => [s.id, s]));
    this.loaded = true;
    this.changed();
  }

  /** A `score` change item from the socket. @param {{data: Score|null}} item */
  applyItem(item) {
    const score = item.data;
    if (!score) {
      this.load(); // taken back: which one is not said
      return;
    }
    const known = this.scores.get(score.id);
    const mine = known ? Boolean(known.mine) : score.author === this.me && score.source !== "evaluator";
    this.scores.set(score.id, { ...score, mine });
    this.changed();
  }

  /**
   * The scores given to a target, oldest first.
   *
   * @param {Target} target
   * @returns {Score[]}
   */
  of(target) {
    return [...this.scores.values()].filter((s) => {
      if (target.kind === "span") return s.target === "span" && s.trace_id === target.trace && s.span_id === target.id;
      if (target.kind === "run") return s.target === "run" && String(s.run) === String(target.run);
      return s.target === "session";
    });
  }

  /**
   * The reader's own score (as a person) of `name` on a target, if given.
   *
   * @param {Target} target @param {string} name
   * @returns {Score|undefined}
   */
  mineOf(target, name) {
    return this.of(target).find((s) => s.mine && s.name === name && s.source === "person");
  }

  /**
   * Score a target as a person.
   *
   * @param {Target} target
   * @param {string} name
   * @param {string|number|boolean} value
   * @param {string} [comment]
   * @returns {Promise<string>} "" when it was stored, else what went wrong
   */
  async give(target, name, value, comment = "") {
    /** @type {Record<string, any>} */
    const body = { name, value, target: target.kind, comment, source: "person" };
    if (target.kind === "run") body.run = target.run;
    if (target.kind === "span") Object.assign(body, { trace_id: target.trace, span_id: target.id });
    const { problem, data } = await this.track(postJson(this.url, body));
    if (!problem && data?.score) {
      this.scores.set(data.score.id, { ...data.score, mine: true });
      this.changed();
    }
    return problem;
  }

  /**
   * Take a score back (the author's or, for an operator, anyone's).
   *
   * @param {number} id
   * @returns {Promise<string>} "" when it was, else what went wrong
   */
  async remove(id) {
    const { problem } = await this.track(postJson(`${this.url}${id}/delete/`, {}));
    if (!problem) {
      this.scores.delete(id);
      this.changed();
    }
    return problem;
  }

  /** @private */
  changed() {
    for (const listener of this.listeners) listener();
  }
}

/**
 * POST a JSON body with the page's CSRF token.
 *
 * @param {string} url
 * @param {object} body
 * @returns {Promise<{problem: string, data: any}>} problem: "" when it went through
 */
export async function postJson(url, body) {
  const token = /** @type {HTMLInputElement|null} */ (document.querySelector("input[name=csrfmiddlewaretoken]"));
  const answer = await fetch(url, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRFToken": token?.value || "" },
    body: JSON.stringify(body),
  }).catch(() => null);
  if (!answer) return { problem: "the server could not be reached", data: null };
  const data = await answer.json().catch(() => null);
  if (answer.ok) return { problem: "", data };
  return { problem: data?.error?.message || `the server said ${answer.status}`, data };
}
