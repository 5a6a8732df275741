/**
 * The session page: starts from the session's snapshot (inline in the page, else over HTTP),
 * goes live over the socket from the snapshot's seq, and pulls the span summaries page by page meanwhile (docs/PROTOCOL.md,
 * "Pages over HTTP"). Wires both to the chat, the timeline and (for operators) the controls.
 * Initial data comes from the page's `json_script` element `#session-data`.
 *
 * @module dashboard/session
 */

import { readJsonScript } from "../../../core/js/dom.js";
import { Chat } from "../chat/chat.js";
import { Confirmations } from "../controls/confirmations.js";
import { Controls } from "../controls/controls.js";
import { setupComposer } from "./composer.js";
import { setupDetailSplit } from "./detail_split.js";
import { setupExportMenu } from "./export_menu.js";
import { FindBar } from "../timeline/find_bar.js";
import { LiveSocket } from "../../../live/js/socket.js";
import { setupPageKeys } from "./page_keys.js";
import { setupPanels } from "./panels.js";
import { setupFeedback } from "../chat/chat_feedback.js";
import { SessionData } from "./session_data.js";
import { SessionScores } from "../scores/session_scores.js";
import { spanActions } from "./span_actions.js";
import { RunBadge, UsageTotal } from "./session_header.js";
import { SpanLinks } from "../timeline/span_links.js";
import { Timeline } from "../timeline/timeline.js";

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

/**
 * @typedef {object} Page  the session page's parts, as main() wires them
 * @property {any} data the page's `#session-data`
 * @property {SessionData} api
 * @property {Chat} chat
 * @property {Timeline} timeline
 * @property {SpanLinks} links
 * @property {Map<string, string>} traceOfRun run id → its trace, for links to a run
 * @property {Confirmations} confirmations
 * @property {SessionScores} scores
 * @property {Controls|null} controls
 * @property {RunBadge} badge
 * @property {UsageTotal} usage
 * @property {HTMLElement} banner
 * @property {import("./composer.js").Composer} [composer] set once the socket is made
 */

async function main() {
  const data = readJsonScript("session-data");
  const api = new SessionData(data.data_path);
  const panels = setupPanels();
  /** @type {LiveSocket|null} */
  let socket = null;
  const send = (/** @type {object} */ m) => Boolean(socket?.send(m));
  const banner = byId("banner");
  const badge = new RunBadge(byId("run-status"));
  const chat = new Chat({
    list: /** @type {HTMLOListElement} */ (byId("messages")),
    empty: byId("chat-empty"),
    agentName: data.app_name,
    fetchOlder: (before) => api.events(before),
    fetchNewer: (after) => api.eventsAfter(after),
    cancel: data.can_cancel ? (id) => send({ type: "run.cancel", run_id: Number(id) }) : undefined,
  });
  const scores = new SessionScores({ url: data.scores_path, me: data.me, operator: data.is_operator });
  if (data.feedback) setupFeedback({ list: byId("messages"), url: data.scores_path, store: scores.store });
  const actions = spanActions({ playgroundPath: data.playground_path || "", scores: scores.element });
  const { timeline, links, traceOfRun } = setupTimeline(api, panels, badge, banner, scores, actions);
  const root = data.is_operator ? document.getElementById("controls") : null;
  const controls = root ? new Controls({ root, data, send }) : null;
  const confirmations = new Confirmations({
    root: byId("confirmations"),
    fetchPending: () => api.confirmations(),
    send,
    timeline,
  });
  const usage = new UsageTotal(byId("session-usage"));
  /** @type {Page} */
  const page = { data, api, chat, timeline, links, traceOfRun, confirmations, scores, controls, badge, usage, banner };
  socket = new LiveSocket(data.ws_path, socketHandlers(page, () => socket));
  page.composer = setupComposer(socket, chat);
  await startFromSnapshot(page, socket);
}

/**
 * The timeline panel and what works on it: the export menu, the details' split, the find
 * bar, links to spans, scores and the page's keys.
 *
 * @param {SessionData} api @param {ReturnType<typeof setupPanels>} panels
 * @param {RunBadge} badge @param {HTMLElement} banner @param {SessionScores} scores
 * @param {ReturnType<typeof spanActions>} actions
 */
function setupTimeline(api, panels, badge, banner, scores, actions) {
  /** @type {SpanLinks|null} */
  let links = null;
  const panel = /** @type {HTMLElement} */ (document.querySelector(".timeline-panel"));
  const timeline = new Timeline({
    root: panel,
    fetchSpan: (traceId, spanId) => api.span(traceId, spanId),
    onSelect: () => panels.showPanel("timeline"),
    onComplete: () => {
      badge.render();
      links?.complete();
    },
    detailExtra: actions.element,
  });
  timeline.on("select", (node) => actions.show(node));
  badge.timeline = timeline;
  scores.attach(timeline);
  setupExportMenu({ timeline });
  const split = panel.querySelector(".detail-split");
  if (split) setupDetailSplit({ panel, handle: /** @type {HTMLElement} */ (split) });
  const find = new FindBar({
    form: /** @type {HTMLFormElement} */ (byId("span-find")),
    timeline,
    search: (text, signal) => api.searchSpans(text, signal),
  });
  if (find.fromQuery(new URLSearchParams(location.search))) {
    panels.showPanel("timeline"); // the Monitor's drill-down came for the steps (on a phone)
  }
  /** @type {Map<string, string>} */
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
    scores,
  });
  return { timeline, links, traceOfRun };
}

/** A run as every part of the page follows it. @param {Page} page
 * @param {import("../chat/chat_runs.js").Run & {trace_id?: string}} run */
function applyRun(page, run) {
  if (run.trace_id) page.traceOfRun.set(String(run.id), String(run.trace_id));
  page.confirmations.applyRun(run);
  page.chat.applyRun(run);
  page.timeline.applyRun(run);
  page.controls?.applyRun(run);
  page.badge.run(run);
  page.usage.run(run);
}

/**
 * What the socket's messages do to the page.
 *
 * @param {Page} page @param {() => LiveSocket|null} socket
 * @returns {import("../../../live/js/socket.js").SocketHandlers}
 */
function socketHandlers(page, socket) {
  const { chat, timeline, controls, badge, banner } = page;
  return {
    onChanges(items) {
      const spans = [];
      for (const item of items) {
        if (item.kind === "score") page.scores.applyItem(item); // one taken back has no data
        if (!item.data) continue; // the row is gone (e.g. a deleted run)
        if (item.kind === "event") {
          chat.applyEvent(item.data);
          controls?.applyEvent(item.data);
        } else if (item.kind === "span") {
          spans.push(item);
        } else if (item.kind === "state") {
          controls?.applyState(item.data);
        } else if (item.kind === "run") {
          applyRun(page, item.data);
        } else if (item.kind === "pause") {
          page.confirmations.refresh(); // a remote app's step paused, was answered or went on
        }
      }
      if (spans.length) timeline.applySpans(spans);
      badge.render();
    },
    onMessage: (message) => routeMessage(page, message),
    onState(state, detail) {
      const node = byId("connection");
      node.dataset.state = state;
      let label = CONNECTION_LABELS[state] || state;
      if (state === "reconnecting" && detail?.retryInMs) {
        label = `Reconnecting in ${Math.ceil(detail.retryInMs / 1000)} s…`;
      }
      /** @type {Element} */ (node.lastElementChild).textContent = label; // the label's span
      composerReady(state, Boolean(socket()?.isOpen));
      if (state === "reconnecting") page.composer?.closed();
      if (state === "live" || state === "replaying") page.composer?.flush();
      if (state === "forbidden" || state === "not-found") page.composer?.fail();
      if (state === "reconnecting" || state === "forbidden" || state === "not-found") {
        controls?.connectionLost(); // what was asked on the closed socket has no answer
      }
      if (state === "forbidden" || state === "not-found") {
        showBanner(banner, "This session is not available to you any more. Reload the page.");
      }
    },
    onStale() {
      location.reload(); // the session's history was replaced (restored from a backup, say)
    },
  };
}

/** A message that is not changes. @param {Page} page @param {any} message */
function routeMessage(page, message) {
  const { chat, confirmations, controls } = page;
  switch (message.type) {
    case "replay.done":
      chat.scrollToEnd();
      confirmations.refresh();
      if (controls) refreshControls(page.api, controls);
      break;
    case "partial":
      chat.applyPartial(message);
      break;
    case "spans": // not stored yet: their stored changes follow
      page.timeline.applyPreviews(message.items);
      page.badge.render();
      break;
    case "chat.accepted":
      page.composer?.answered(message.client_id);
      chat.accepted(message);
      break;
    case "callback.changed":
      controls?.applySwitch(message.setting);
      break;
    case "ack":
      if (!confirmations.answer(message)) controls?.answer(message);
      break;
    case "error":
      if (message.ref === "chat.send") page.composer?.answered(message.req);
      if (confirmations.answer(message) || controls?.answer(message)) break;
      if (message.ref === "chat.send" || !message.ref) chat.showError(message);
      else showBanner(page.banner, `${message.code}: ${message.message}`);
      break;
    default:
      break; // pong, and anything newer than this page
  }
}

/**
 * The page from its snapshot (inline on a fresh navigation: a page restored from the
 * browser's history would hold an old one), live from the snapshot's seq, then every span's
 * summary page by page.
 *
 * @param {Page} page @param {LiveSocket} socket
 */
async function startFromSnapshot(page, socket) {
  const { api, chat, timeline, controls, banner } = page;
  const navigation = /** @type {PerformanceNavigationTiming|undefined} */ (performance.getEntriesByType("navigation")[0]);
  const fresh = !navigation || navigation.type === "navigate" || navigation.type === "reload";
  const inline = fresh && document.getElementById("session-snapshot");
  const snapshot = inline ? readJsonScript("session-snapshot") : await snapshotWithRetries(api, banner);
  if (!snapshot) return;
  chat.loadLatest(snapshot.events, snapshot.events_before);
  page.usage.load(snapshot.usage, snapshot.runs);
  for (const run of snapshot.runs) applyRun(page, run);
  if (snapshot.state) controls?.loadState(snapshot.state, snapshot.version);
  timeline.setExpected(snapshot.spans_total);
  page.links.start();
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
  page.badge.render();
}

/** What is not replayed (switch changes) or may have moved since the page's snapshot: the
 * operator's switches and state, read again whenever the page is back live.
 * @param {SessionData} api @param {Controls} controls */
async function refreshControls(api, controls) {
  const mark = controls.toggles; // a switch sent while this is read makes it old
  try {
    const fresh = await api.snapshot();
    controls.loadCallbacks(fresh.callbacks, mark);
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

/** Send works whenever the session is there: a message written while the socket is not
 * open waits for it (the composer), on a phone's tap as on Enter.
 * @param {import("../../../live/js/socket.js").SocketState} state @param {boolean} open */
function composerReady(state, open) {
  const button = /** @type {HTMLButtonElement} */ (byId("composer-send"));
  button.disabled = state === "forbidden" || state === "not-found";
  button.title = open || button.disabled ? "" : "Sent as soon as the connection is back";
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
