/**
 * The session page: starts from the session's snapshot (inline in the page, else over HTTP),
 * goes live over the socket from the snapshot's seq, and pulls the span summaries page by page meanwhile (docs/PROTOCOL.md,
 * "Pages over HTTP"). Wires both to the chat, the timeline and (for operators) the controls.
 * Initial data comes from the page's `json_script` element `#session-data`.
 *
 * @module dashboard/session
 */

import { readJsonScript } from "../../core/js/dom.js";
import { Chat } from "./chat.js";
import { Confirmations } from "./confirmations.js";
import { Controls } from "./controls.js";
import { setupDetailSplit } from "./detail_split.js";
import { setupExportMenu } from "./export_menu.js";
import { FindBar } from "./find_bar.js";
import { LiveSocket } from "../../live/js/socket.js";
import { setupPageKeys } from "./page_keys.js";
import { setupPanels } from "./panels.js";
import { SessionData } from "./session_data.js";
import { isActive } from "./run_status.js";
import { SpanLinks } from "./span_links.js";
import { Timeline } from "./timeline.js";
import { SessionUsage, usageText, usageTitle } from "./usage.js";

const CONNECTION_LABELS = {
  connecting: "Connecting…",
  replaying: "Catching up…",
  live: "Live",
  reconnecting: "Reconnecting…",
  forbidden: "Not allowed",
  "not-found": "Session gone",
};
const SNAPSHOT_RETRY_MS = [500, 1_000, 2_000, 5_000, 10_000];

/** @param {string} id @returns {HTMLElement} */
const byId = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

async function main() {
  const data = readJsonScript("session-data");
  const api = new SessionData(data.data_path);
  const panels = setupPanels();
  const chat = new Chat({
    list: /** @type {HTMLOListElement} */ (byId("messages")),
    empty: byId("chat-empty"),
    agentName: data.app_name,
    fetchOlder: (before) => api.events(before),
    fetchNewer: (after) => api.eventsAfter(after),
    cancel: data.can_cancel
      ? (id) => socket.send({ type: "run.cancel", run_id: Number(id) })
      : undefined,
  });
  const badge = new RunBadge(byId("run-status"));
  const usage = new UsageTotal(byId("session-usage"));
  const banner = byId("banner");
  /** @type {SpanLinks|null} */
  let links = null;
  const timeline = new Timeline({
    root: /** @type {HTMLElement} */ (document.querySelector(".timeline-panel")),
    fetchSpan: (traceId, spanId) => api.span(traceId, spanId),
    onSelect: () => panels.showPanel("timeline"),
    onComplete: () => {
      badge.render();
      links?.complete();
    },
  });
  badge.timeline = timeline;
  setupExportMenu({ timeline });
  const split = document.querySelector(".timeline-panel .detail-split");
  if (split) {
    setupDetailSplit({
      panel: /** @type {HTMLElement} */ (document.querySelector(".timeline-panel")),
      handle: /** @type {HTMLElement} */ (split),
    });
  }
  const find = new FindBar({
    form: /** @type {HTMLFormElement} */ (byId("span-find")),
    timeline,
    search: (text, signal) => api.searchSpans(text, signal),
  });
  /** @type {Map<string, string>} run id → its trace, for links to a run */
  const traceOfRun = new Map();
  links = new SpanLinks({
    timeline,
    traceOfRun: (id) => traceOfRun.get(id) || null,
    onMissing: (text) => showBanner(banner, text),
  });
  setupPageKeys({
    dialog: /** @type {HTMLDialogElement} */ (byId("keymap")),
    timeline,
    find,
    composer: /** @type {HTMLTextAreaElement|null} */ (document.getElementById("composer-text")),
    panels,
  });
  /** @type {Controls|null} */
  let controls = null;
  if (data.is_operator) {
    const root = byId("controls");
    if (root) controls = new Controls({ root, data, send: (m) => socket.send(m) });
  }

  const confirmations = new Confirmations({
    root: byId("confirmations"),
    fetchPending: () => api.confirmations(),
    send: (m) => socket.send(m),
    timeline,
  });

  const applyRun = (/** @type {import("./chat_runs.js").Run & {trace_id?: string}} */ run) => {
    if (run.trace_id) traceOfRun.set(String(run.id), String(run.trace_id));
    confirmations.applyRun(run);
    chat.applyRun(run);
    timeline.applyRun(run);
    controls?.applyRun(run);
    badge.run(run);
    usage.run(run);
  };

  const socket = new LiveSocket(data.ws_path, {
    onChanges(items) {
      const spans = [];
      for (const item of items) {
        if (!item.data) continue; // the row is gone (e.g. a deleted run)
        if (item.kind === "event") {
          chat.applyEvent(item.data);
          controls?.applyEvent(item.data);
        } else if (item.kind === "span") {
          spans.push(item);
        } else if (item.kind === "state") {
          controls?.applyState(item.data);
        } else if (item.kind === "run") {
          applyRun(item.data);
        }
      }
      if (spans.length) timeline.applySpans(spans);
      badge.render();
    },
    onMessage(message) {
      switch (message.type) {
        case "replay.done":
          chat.scrollToEnd();
          confirmations.refresh();
          if (controls) refreshControls(api, controls);
          break;
        case "partial":
          chat.applyPartial(message);
          break;
        case "chat.accepted":
          chat.accepted(message);
          break;
        case "callback.changed":
          controls?.applySwitch(message.setting);
          break;
        case "ack":
          if (!confirmations.answer(message)) controls?.answer(message);
          break;
        case "error":
          if (confirmations.answer(message) || controls?.answer(message)) break;
          if (message.ref === "chat.send" || !message.ref) chat.showError(message);
          else showBanner(banner, `${message.code}: ${message.message}`);
          break;
        default:
          break; // pong, and anything newer than this page
      }
    },
    onState(state, detail) {
      const node = byId("connection");
      node.dataset.state = state;
      let label = CONNECTION_LABELS[state] || state;
      if (state === "reconnecting" && detail?.retryInMs) {
        label = `Reconnecting in ${Math.ceil(detail.retryInMs / 1000)} s…`;
      }
      /** @type {Element} */ (node.lastElementChild).textContent = label; // the label's span
      composerReady(socket.isOpen);
      if (state === "forbidden" || state === "not-found") {
        showBanner(banner, "This session is not available to you any more. Reload the page.");
      }
    },
    onStale() {
      location.reload(); // the session's history was replaced (restored from a backup, say)
    },
  });
  setupComposer(socket, chat);

  // The page comes with its snapshot; a page restored from the browser's history would
  // hold an old one, so only a fresh navigation uses it.
  const navigation = /** @type {PerformanceNavigationTiming|undefined} */ (performance.getEntriesByType("navigation")[0]);
  const fresh = !navigation || navigation.type === "navigate" || navigation.type === "reload";
  const inline = fresh && document.getElementById("session-snapshot");
  const snapshot = inline ? readJsonScript("session-snapshot") : await snapshotWithRetries(api, banner);
  if (!snapshot) return;
  chat.loadLatest(snapshot.events, snapshot.events_before);
  usage.load(snapshot.usage, snapshot.runs);
  for (const run of snapshot.runs) applyRun(run);
  if (snapshot.state) controls?.loadState(snapshot.state, snapshot.version);
  timeline.setExpected(snapshot.spans_total);
  links.start();
  socket.start(snapshot.seq);
  let retried = false;
  try {
    await api.allSpans(
      (fields, rows) => {
        timeline.loadRows(fields, rows);
        if (retried) banner.hidden = true;
        retried = false;
      },
      (error, pauseMs) => {
        retried = true;
        const inS = Math.ceil(pauseMs / 1000);
        showBanner(banner, `Loading the spans failed (${error.message}); trying again in ${inS} s…`);
      },
    );
  } catch (/** @type {any} */ error) {
    showBanner(banner, `The timeline could not load every span: ${error.message}. Reload the page.`);
  }
  timeline.loaded(); // what came in is all there will be: the page must not wait for more
  badge.render();
}

/** What is not replayed (switch changes) or may have moved since the page's snapshot: the
 * operator's switches and state, read again whenever the page is back live.
 * @param {SessionData} api @param {Controls} controls */
async function refreshControls(api, controls) {
  try {
    const fresh = await api.snapshot();
    controls.loadCallbacks(fresh.callbacks);
    if (fresh.state) controls.loadState(fresh.state, fresh.version);
  } catch {
    // the page stays as it was; the next time it is back live it tries again
  }
}

/** The snapshot, retried while the server is away; null (with a banner) when refused.
 * @param {SessionData} api @param {HTMLElement} banner @returns {Promise<any>} */
async function snapshotWithRetries(api, banner) {
  for (let attempt = 0; ; attempt += 1) {
    try {
      const snapshot = await api.snapshot();
      banner.hidden = true;
      return snapshot;
    } catch (/** @type {any} */ error) {
      if (!error.retryable) {
        showBanner(banner, `This session could not be loaded: ${error.message}.`);
        return null;
      }
      const pause = SNAPSHOT_RETRY_MS[Math.min(attempt, SNAPSHOT_RETRY_MS.length - 1)];
      showBanner(banner, `Loading the session failed (${error.message}); trying again…`);
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

/**
 * The header's total: the session's tokens and cost, as the server counts them (the
 * snapshot's, then growing with each run's totals). Its numbers are on the element too
 * (`data-input`, `data-output`, `data-cost-usd`: "" when unknown).
 */
class UsageTotal {
  /** @param {HTMLElement} node */
  constructor(node) {
    this.node = node;
    this.totals = new SessionUsage();
    this.shown = "";
    this.frame = 0;
  }

  /** @param {import("./usage.js").Usage|undefined} total @param {unknown} runs */
  load(total, runs) {
    this.totals.load(total, Array.isArray(runs) ? runs : []);
    this.later();
  }

  /** @param {{id: string|number, usage?: import("./usage.js").Usage}} run */
  run(run) {
    if (!this.totals.rest) return; // before the snapshot: load() counts it
    this.totals.run(run);
    this.later();
  }

  /** Drawn once a frame at most: a total sums every run, and a page opens with hundreds. */
  later() {
    if (!this.frame) {
      this.frame = requestAnimationFrame(() => {
        this.frame = 0;
        this.render();
      });
    }
  }

  render() {
    const total = this.totals.total;
    if (!total || !this.node) return;
    const text = usageText(total);
    if (text !== this.shown) {
      this.shown = text;
      this.node.hidden = false;
      this.node.textContent = text;
    }
    this.node.title = `This session: ${usageTitle(total)}`;
    this.node.dataset.input = String(total.input ?? "");
    this.node.dataset.output = String(total.output ?? "");
    this.node.dataset.costUsd = total.cost_usd === null ? "" : String(total.cost_usd);
  }
}

/**
 * The header's run status: the run that holds the session's turn (running, or waiting for
 * an approval) and how many wait behind it; with none, the latest run's outcome — shown as
 * finished only once the timeline has every span the session had when the page opened
 * (else it would say "succeeded" next to rows still loading).
 */
class RunBadge {
  /** @param {HTMLElement} node */
  constructor(node) {
    this.node = node;
    /** @type {{isComplete: boolean}|null} set once the timeline exists */
    this.timeline = null;
    /** @type {Map<string, {id: string|number, status: string}>} runs by id, as last told */
    this.runs = new Map();
  }

  /** @param {{id: string|number, status: string}} run */
  run(run) {
    this.runs.set(String(run.id), run);
  }

  render() {
    let latest = null;
    let holder = null;
    let queued = 0;
    for (const run of this.runs.values()) {
      if (!latest || Number(run.id) > Number(latest.id)) latest = run;
      if (run.status === "queued") queued += 1;
      const holds = run.status === "running" || run.status === "waiting";
      if (holds && (!holder || Number(run.id) > Number(holder.id))) holder = run;
    }
    const run = holder || latest;
    if (!run) return;
    const status = String(run.status);
    const active = isActive(status);
    const shown = active || this.timeline?.isComplete ? status : "loading";
    const behind = holder && queued ? ` · ${queued} queued` : "";
    this.node.hidden = false;
    this.node.dataset.status = shown;
    this.node.textContent =
      shown === "loading"
        ? "loading spans…"
        : `${active ? `run ${status}…` : `run ${status}`}${behind}`;
  }
}

/** The composer sends `chat.send`; Enter sends, Shift+Enter starts a new line.
 * @param {LiveSocket} socket @param {Chat} chat */
function setupComposer(socket, chat) {
  const form = /** @type {HTMLFormElement} */ (byId("composer"));
  const text = /** @type {HTMLTextAreaElement} */ (byId("composer-text"));
  let counter = 0;
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const value = text.value.trim();
    if (!value) return;
    const clientId = `c${Date.now().toString(36)}${(counter += 1)}`;
    if (!socket.send({ type: "chat.send", text: value, client_id: clientId })) {
      chat.showError({ code: "offline", message: "Not connected: the message was not sent." });
      return;
    }
    chat.addPending(clientId, value);
    chat.scrollToEnd();
    text.value = "";
  });
  text.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
}

/** @param {boolean} open */
function composerReady(open) {
  const button = /** @type {HTMLButtonElement} */ (byId("composer-send"));
  button.disabled = !open;
}

/** @param {HTMLElement} node @param {string} text */
function showBanner(node, text) {
  node.textContent = text;
  node.hidden = false;
}

// A page restored from the back/forward cache closed its socket when it was left: start over.
window.addEventListener("pageshow", (event) => {
  if (event.persisted) location.reload();
});

main();
