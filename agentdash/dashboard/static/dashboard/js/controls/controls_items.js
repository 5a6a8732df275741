/**
 * The parts of the operator's Controls panel that draw one thing each: a callback's two
 * switches, a run of the runs list. Their requests, status lines and reasons are the
 * panel's (controls.js); the answers come back to it by request id.
 *
 * @module dashboard/controls_items
 */

import { el } from "../../../core/js/dom.js";
import { mayCancel } from "../common/run_status.js";
import { hasUsage, usageText, usageTitle } from "../common/usage.js";

/** @typedef {import("./controls.js").CallbackSwitch} CallbackSwitch */
/** @typedef {import("../chat/chat_runs.js").Run} Run */

const RUN_STATES = new Set(["queued", "running", "waiting", "succeeded", "failed", "cancelled"]);

/**
 * One callback: a switch for this session (showing what applies here) and one for every
 * session (the global setting).
 *
 * @param {CallbackSwitch} cb
 * @param {import("./controls.js").Controls} host the panel: its requests, status lines and switches
 */
export function callbackItem(cb, host) {
  const item = el("li", {
    class: "callback",
    attrs: { "data-callback": cb.name, "data-agent": cb.agent },
  });
  const session = switchInput("session", `${cb.name}: this session`);
  const global = switchInput("global", `${cb.name}: every session`);
  const boxes = [session.input, global.input];
  const override = el("span", { class: "override" });
  const sync = () => {
    session.input.checked = cb.session ?? cb.global ?? true;
    global.input.checked = cb.global ?? true;
    const pinned = cb.session !== null && cb.session !== undefined;
    const differs = pinned && cb.session !== (cb.global ?? true);
    // "session override": this session does otherwise than every other; "pinned": it has
    // its own switch, today the same as the global one (a global change will not move it).
    override.hidden = !pinned;
    override.textContent = differs ? "session override" : "pinned for this session";
    override.classList.toggle("same", !differs);
    item.classList.toggle("off", !session.input.checked);
  };
  host.switches.set(`${cb.agent}|${cb.name}`, { cb, sync });
  const toggle = (/** @type {"session"|"global"} */ scope, /** @type {HTMLInputElement} */ input) => {
    const reason = host.requireReason("callbacks-status");
    if (reason === null) return sync();
    const [enabled, where] = [input.checked, scope === "global" ? "every session" : "this session"];
    const message = {
      type: "callback.toggle", agent: cb.agent, callback: cb.name, enabled, scope, reason,
    };
    const sent = host.request(message, (ok, answer) => {
      if (ok) cb[scope] = answer.setting?.enabled ?? enabled; // as stored
      const text = ok ? `${cb.name} ${enabled ? "on" : "off"} (${where}).` : errorText(answer);
      host.status("callbacks-status", text, ok ? "ok" : "error");
      boxes.forEach((box) => (box.disabled = false));
      sync();
    });
    if (!sent) {
      host.status("callbacks-status", "Not connected: the switch was not changed.", "error");
      return sync();
    }
    host.toggles += 1; // a fresh read of the switches begun before this one is old
    boxes.forEach((box) => (box.disabled = true));
    host.status("callbacks-status", `Switching ${cb.name}…`);
  };
  session.input.addEventListener("change", () => toggle("session", session.input));
  global.input.addEventListener("change", () => toggle("global", global.input));
  item.append(
    el("div", {
      class: "callback-head",
      children: [
        el("code", { class: "callback-name", text: cb.name }),
        el("span", { class: "callback-where", text: `${cb.agent} · ${cb.slot}` }),
        override,
      ],
    }),
    el("div", { class: "callback-switches", children: [session.label, global.label] }),
  );
  sync();
  return item;
}

/**
 * A run of the runs list: its status, id, attempt, usage, error, and Cancel while it may be.
 *
 * @param {Run} run @param {import("./controls.js").Controls} host
 */
export function runItem(run, host) {
  const status = RUN_STATES.has(run.status) ? run.status : "other";
  const item = el("li", {
    class: "run",
    attrs: { "data-run-id": String(run.id), "data-status": status },
    children: [
      el("span", { class: `badge run-${status}`, text: String(run.status) }),
      el("code", {
        class: "run-id",
        text: String(run.invocation_id || run.id),
        attrs: { title: "Invocation id" },
      }),
      (run.attempt ?? 0) > 1 ? el("span", { class: "muted", text: `attempt ${run.attempt}` }) : null,
      hasUsage(run.usage)
        ? el("span", {
            class: "run-usage",
            text: usageText(run.usage),
            attrs: { title: usageTitle(run.usage) },
          })
        : null,
      run.error ? el("div", { class: "run-error", text: String(run.error) }) : null,
    ],
  });
  if (mayCancel(run.status)) item.append(cancelButton(run, host));
  return item;
}

/** @param {Run} run @param {import("./controls.js").Controls} host */
function cancelButton(run, host) {
  const button = el("button", {
    class: "danger small",
    text: run.cancel_requested ? "Cancelling…" : "Cancel",
    attrs: { type: "button", disabled: Boolean(run.cancel_requested) },
  });
  button.addEventListener("click", () => {
    const reason = host.requireReason("runs-status", host.cancelReason);
    if (reason === null) return;
    const sent = host.request({ type: "run.cancel", run_id: run.id, reason }, (ok, answer) => {
      const text = ok ? "Cancel requested: the run stops at its next step." : errorText(answer);
      host.status("runs-status", text, ok ? "ok" : "error");
    });
    if (!sent) return host.status("runs-status", "Not connected.", "error");
    button.disabled = true;
    host.status("runs-status", "Cancelling…");
  });
  return button;
}

/** A labelled checkbox drawn as a switch. @param {string} scope @param {string} ariaLabel */
function switchInput(scope, ariaLabel) {
  const input = /** @type {HTMLInputElement} */ (
    el("input", { attrs: { type: "checkbox", "data-scope": scope, "aria-label": ariaLabel } })
  );
  const label = el("label", {
    class: "switch",
    children: [
      input,
      el("span", { class: "track" }),
      el("span", { text: scope === "global" ? "global" : "this session" }),
    ],
  });
  return { input, label };
}

/** "code: message" for an `error` answer. @param {any} answer @returns {string} */
export function errorText(answer) {
  return `${answer.code || "error"}: ${answer.message || "the request failed"}`;
}
