/**
 * What an operator can do from a span's details beyond reading it: for a model call, open it
 * in the playground (docs/PLAYGROUND.md) — a link, shown in the details pane above the
 * span's scores.
 *
 * @module dashboard/span_actions
 */

import { el } from "../../../core/js/dom.js";

/**
 * @param {object} options
 * @param {string} options.playgroundPath the session's playground (`/sessions/<id>/playground/`), "" when the reader may not use it
 * @param {HTMLElement} options.scores the scores' part of the pane
 * @returns {{element: HTMLElement, show: (node: any) => void}}
 */
export function spanActions({ playgroundPath, scores }) {
  const link = el("a", { class: "span-action", text: "Open in playground", attrs: { hidden: true } });
  const bar = el("p", { class: "span-actions", children: [link] });
  const element = el("div", { class: "detail-extra", children: [bar, scores] });
  return {
    element,
    show(node) {
      const model = Boolean(playgroundPath) && node.spanKind === "model";
      link.hidden = !model;
      bar.hidden = !model;
      if (model) link.setAttribute("href", `${playgroundPath}${encodeURIComponent(node.trace)}/${encodeURIComponent(node.id)}/`);
    },
  };
}
