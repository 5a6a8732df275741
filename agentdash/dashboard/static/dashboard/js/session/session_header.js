/**
 * The session page's header figures: the session's usage total and the run status badge,
 * each drawn from what the page is told (the snapshot, then each run's changes).
 *
 * @module dashboard/session_header
 */

import { isActive } from "../common/run_status.js";
import { SessionUsage, usageText, usageTitle } from "../common/usage.js";

/**
 * The header's total: the session's tokens and cost, as the server counts them (the
 * snapshot's, then growing with each run's totals). Its numbers are on the element too
 * (`data-input`, `data-output`, `data-cost-usd`: "" when unknown).
 */
export class UsageTotal {
  /** @param {HTMLElement} node */
  constructor(node) {
    this.node = node;
    this.totals = new SessionUsage();
    this.shown = "";
    this.frame = 0;
  }

  /** @param {import("../common/usage.js").Usage|undefined} total @param {unknown} runs */
  load(total, runs) {
    this.totals.load(total, Array.isArray(runs) ? runs : []);
    this.later();
  }

  /** @param {{id: string|number, usage?: import("../common/usage.js").Usage}} run */
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
export class RunBadge {
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
