/**
 * The session page's data over HTTP (docs/PROTOCOL.md, "Pages over HTTP"): the snapshot the
 * page starts from, span summaries page by page, one span in full, older chat events.
 *
 * @module dashboard/session_data
 */

const FIRST_PAGE = 1_000; // small: the first rows show at once
const NEXT_PAGES = 5_000;
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

  /** @returns {Promise<object>} seq, runs, events, events_before, spans_total (, state) */
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

  /** @returns {Promise<{pending: object[]}>} the tool confirmations the session waits on */
  confirmations() {
    return this.get("confirmations/");
  }

  /** @param {number} before @returns {Promise<{events: object[], before: number|null}>} */
  events(before) {
    return this.get(`events/?before=${encodeURIComponent(String(before))}`);
  }

  /**
   * Every span summary, page after page, each page handed to `onPage` as it arrives; a page
   * that failed (server away) is asked again after a growing pause, told to `onRetry`;
   * a 4xx answer throws.
   *
   * @param {(fields: string[], rows: any[][]) => void} onPage
   * @param {(error: DataError, pauseMs: number) => void} [onRetry]
   */
  async allSpans(onPage, onRetry = () => {}) {
    let after = null;
    let limit = FIRST_PAGE;
    let pause = RETRY_FIRST_MS;
    for (;;) {
      const query = `limit=${limit}${after ? `&after=${encodeURIComponent(after)}` : ""}`;
      let page;
      try {
        page = await this.get(`spans/?${query}`);
      } catch (error) {
        if (!(error instanceof DataError) || !error.retryable) throw error;
        onRetry(error, pause);
        await new Promise((resolve) => setTimeout(resolve, pause));
        pause = Math.min(RETRY_MAX_MS, pause * 2);
        continue;
      }
      pause = RETRY_FIRST_MS;
      onPage(page.fields, page.rows);
      if (!page.next) return;
      after = page.next;
      limit = NEXT_PAGES;
    }
  }

  /** @private */
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
