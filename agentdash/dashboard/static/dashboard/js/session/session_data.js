/**
 * The session page's data over HTTP (docs/PROTOCOL.md, "Pages over HTTP"): the snapshot the
 * page starts from, span summaries page by page, one span in full, older chat events.
 *
 * @module dashboard/session_data
 */

const FIRST_PAGE = 1_000; // small: the first rows show at once
const NEXT_PAGES = 5_000;
const PAGE_MAX = 10_000; // the server's most per page (a planned page holds NEXT_PAGES)
const PARALLEL = 3; // pages asked for at once
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 10_000;

/** A request that failed; `status` 0 when the server was not reached. */
export class DataError extends Error {
  /** @param {string} message @param {number} status */
  constructor(message, status) {
    super(message);
    this.status = status;
  }

  /** Whether trying again may help (not a 4xx answer). */
  get retryable() {
    return this.status === 0 || this.status >= 500;
  }
}

export class SessionData {
  /** @param {string} base the session page's path, "/sessions/<id>/" */
  constructor(base) {
    this.base = base;
  }

  /** @returns {Promise<any>} seq, runs, events, events_before, spans_total (, state), as sent */
  snapshot() {
    return this.get("snapshot/");
  }

  /** @param {string} traceId @param {string} spanId @returns {Promise<object|null>} */
  async span(traceId, spanId) {
    try {
      return await this.get(`spans/${encodeURIComponent(traceId)}/${encodeURIComponent(spanId)}/`);
    } catch (error) {
      if (error instanceof DataError && error.status === 404) return null;
      throw error;
    }
  }

  /**
   * The spans whose attributes, events, name or status message hold `text` (any case).
   *
   * @param {string} text
   * @param {AbortSignal} [signal]
   * @returns {Promise<{q: string, keys: [string, string][], truncated: boolean, limit: number, notice: string|null}>}
   */
  searchSpans(text, signal) {
    return this.get(`spans/search/?q=${encodeURIComponent(text)}`, signal);
  }

  /** @returns {Promise<{pending: import("../controls/confirmations.js").Pending[]}>} the tool confirmations the session waits on */
  confirmations() {
    return this.get("confirmations/");
  }

  /**
   * The chat's events before a position (null: the latest page), oldest first.
   *
   * @param {number|null} before
   * @returns {Promise<import("../chat/chat_render.js").EventPage>}
   */
  events(before) {
    return this.get(before === null ? "events/" : `events/?before=${encodeURIComponent(String(before))}`);
  }

  /**
   * The chat's events after a position, oldest first (a reader coming down again).
   *
   * @param {number} after
   * @returns {Promise<import("../chat/chat_newer.js").NewerPage & {before: number|null}>}
   */
  eventsAfter(after) {
    return this.get(`events/?after=${encodeURIComponent(String(after))}`);
  }

  /**
   * Every span summary, each page handed to `onPage` in order as soon as it and the pages
   * before it have arrived. The first page is small (the first rows show at once); then the
   * plan of the rest (`spans/plan/`: where each page begins) is asked for, and the pages for
   * `PARALLEL` at a time, each bounded by its cursors (`after`/`until`), so a span stored
   * meanwhile is on exactly one page; the last one goes on to the end, however the session
   * grew. A page that failed (server away) is asked again after a growing pause,
   * told to `onRetry`; a 4xx answer throws.
   *
   * @param {(fields: string[], rows: any[][]) => void} onPage
   * @param {(error: DataError, pauseMs: number) => void} [onRetry]
   */
  async allSpans(onPage, onRetry = () => {}) {
    const first = await this.retrying(`spans/?limit=${FIRST_PAGE}`, onRetry);
    onPage(first.fields, first.rows);
    let after = first.next;
    if (!after) return;
    const planned = await this.retrying(
      `spans/plan/?after=${encodeURIComponent(after)}&size=${NEXT_PAGES}`,
      onRetry,
    );
    /** @type {string[]} */
    const plan = Array.isArray(planned.plan) ? planned.plan.filter((/** @type {unknown} */ c) => typeof c === "string") : [];
    if (after && plan.length > 1 && plan[0] === after) {
      /** @type {(object|null)[]} the pages arrived and not handed over yet */
      const pending = plan.map(() => null);
      let next = 0; // the next page to ask for
      let shown = 0; // the pages handed over so far
      const ask = async () => {
        while (next < pending.length) {
          const mine = next++;
          pending[mine] = await this.between(plan[mine], plan[mine + 1] ?? null, onRetry);
          while (shown < pending.length && pending[shown]) {
            const page = /** @type {any} */ (pending[shown]);
            pending[shown] = null;
            shown += 1;
            onPage(page.fields, page.rows);
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(PARALLEL, pending.length) }, ask));
      return;
    }
    while (after) {
      const page = await this.retrying(
        `spans/?limit=${NEXT_PAGES}&after=${encodeURIComponent(after)}`,
        onRetry,
      );
      onPage(page.fields, page.rows);
      after = page.next;
    }
  }

  /**
   * @private The spans after cursor `from` up to cursor `until` (null: to the end), however
   * many (a page of the plan that grew meanwhile comes in more than one answer).
   * @param {string} from
   * @param {string|null} until
   * @param {(error: DataError, pauseMs: number) => void} onRetry
   */
  async between(from, until, onRetry) {
    const upTo = until === null ? "" : `&until=${encodeURIComponent(until)}`;
    const bounds = (/** @type {string} */ after) => `spans/?after=${encodeURIComponent(after)}${upTo}&limit=${PAGE_MAX}`;
    const page = await this.retrying(bounds(from), onRetry);
    let rows = page.rows;
    for (let more = page.next; more; ) {
      const rest = await this.retrying(bounds(more), onRetry);
      rows = rows.concat(rest.rows);
      more = rest.next;
    }
    return { fields: page.fields, rows };
  }

  /**
   * @private A page, asked again after a growing pause while the server cannot answer.
   * @param {string} path
   * @param {(error: DataError, pauseMs: number) => void} onRetry
   */
  async retrying(path, onRetry) {
    let pause = RETRY_FIRST_MS;
    for (;;) {
      try {
        return await this.get(path);
      } catch (error) {
        if (!(error instanceof DataError) || !error.retryable) throw error;
        onRetry(error, pause);
        await new Promise((resolve) => setTimeout(resolve, pause));
        pause = Math.min(RETRY_MAX_MS, pause * 2);
      }
    }
  }

  /**
   * @private The JSON object at `path` under the page's base.
   * @param {string} path
   * @param {AbortSignal} [signal]
   * @returns {Promise<any>}
   * @throws {DataError} when the server cannot be reached or does not answer with an object
   */
  async get(path, signal = undefined) {
    let response;
    try {
      response = await fetch(this.base + path, {
        credentials: "same-origin",
        headers: { Accept: "application/json" },
        signal,
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new DataError("the server could not be reached", 0);
    }
    if (response.redirected) throw new DataError("signed out: log in again", 401);
    let body = null;
    try {
      body = await response.json();
    } catch {
      // not JSON: a proxy's error page, a login redirect's target
    }
    if (!response.ok || body === null || typeof body !== "object") {
      const message = body?.error?.message || `the server answered ${response.status}`;
      throw new DataError(String(message), response.ok ? 0 : response.status);
    }
    return body;
  }
}
