/**
 * The session page's panels (chat, timeline, controls). On a wide screen they show side by
 * side; on a narrow one (NARROW, as in session.css) one at a time, chosen in a tab bar that
 * follows the WAI-ARIA tabs pattern: one tab stop, ←/→ (and Home/End) move to a tab and show
 * its panel. The tab and tabpanel roles are set only while the bar is in use.
 *
 * Markup: a `[role=tablist]` of `button[role=tab][data-panel][aria-controls]`, each naming a
 * panel element by id; the panel shown carries the class `is-active`. Showing a panel
 * dispatches `panelshow` on it (a panel that sizes itself from its box can measure again).
 *
 * @module dashboard/panels
 */

const NARROW = "(max-width: 760px)";
/** @type {Record<string, number>} how far each arrow key moves */
const KEYS = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 };

/**
 * @typedef {object} Panels
 * @property {(name: string, options?: {focus?: boolean}) => boolean} showPanel show a panel
 *   ("chat", "timeline", "controls") and select its tab; false when there is no such panel
 * @property {() => string} current the panel selected
 */

/** @type {Panels|null} */
let panels = null;

/**
 * Set the tab bar up (once; later calls return the same object).
 *
 * @param {{bar?: HTMLElement|null}} [options] the tab list (default `#panel-tabs`)
 * @returns {Panels}
 */
export function setupPanels({ bar = document.getElementById("panel-tabs") } = {}) {
  if (panels) return panels;
  const tabs = /** @type {HTMLButtonElement[]} */ (bar ? [...bar.querySelectorAll("[role=tab][data-panel]")] : []);
  const panelOf = (/** @type {HTMLButtonElement} */ tab) => document.getElementById(tab.getAttribute("aria-controls") || "");
  const selected = () => tabs.find((tab) => tab.getAttribute("aria-selected") === "true");

  const select = (/** @type {HTMLButtonElement} */ tab, /** @type {boolean} */ focus) => {
    const before = selected();
    for (const other of tabs) {
      const on = other === tab;
      other.setAttribute("aria-selected", String(on));
      other.tabIndex = on ? 0 : -1;
      panelOf(other)?.classList.toggle("is-active", on);
    }
    if (focus) tab.focus();
    if (before !== tab) panelOf(tab)?.dispatchEvent(new CustomEvent("panelshow"));
  };

  for (const tab of tabs) {
    tab.addEventListener("click", () => select(tab, true));
  }
  bar?.addEventListener("keydown", (event) => {
    const index = tabs.indexOf(/** @type {HTMLButtonElement} */ (event.target));
    if (index < 0) return;
    let next = -1;
    if (event.key in KEYS) next = (index + KEYS[event.key] + tabs.length) % tabs.length;
    else if (event.key === "Home") next = 0;
    else if (event.key === "End") next = tabs.length - 1;
    if (next < 0) return;
    event.preventDefault();
    select(tabs[next], true);
  });

  tabRolesWhileNarrow(tabs, panelOf);
  if (tabs.length) select(selected() || tabs[0], false);

  panels = {
    showPanel(name, { focus = false } = {}) {
      const tab = tabs.find((t) => t.dataset.panel === name);
      if (!tab) return false;
      select(tab, focus);
      return true;
    },
    current: () => selected()?.dataset.panel || "",
  };
  return panels;
}

/**
 * Show a panel ("chat", "timeline", "controls") — on a phone, switch to its tab. A no-op
 * (false) before {@link setupPanels} or for an unknown panel.
 *
 * @param {string} name
 * @returns {boolean}
 */
export function showPanel(name) {
  return panels ? panels.showPanel(name) : false;
}

/**
 * Tab roles only while the bar shows: on a wide screen the panels are plain regions.
 * @param {HTMLButtonElement[]} tabs @param {(tab: HTMLButtonElement) => HTMLElement|null} panelOf
 */
function tabRolesWhileNarrow(tabs, panelOf) {
  const narrow = window.matchMedia(NARROW);
  const roles = () => {
    for (const tab of tabs) {
      const panel = panelOf(tab);
      if (!panel) continue;
      panel.dataset.labelledby ??= panel.getAttribute("aria-labelledby") || "";
      if (narrow.matches) {
        panel.setAttribute("role", "tabpanel");
        panel.setAttribute("aria-labelledby", tab.id);
      } else {
        panel.removeAttribute("role");
        if (panel.dataset.labelledby) {
          panel.setAttribute("aria-labelledby", panel.dataset.labelledby);
        }
      }
    }
  };
  narrow.addEventListener("change", roles);
  roles();
}
