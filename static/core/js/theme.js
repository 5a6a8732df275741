/**
 * The theme toggle in the top bar (templates/_theme_toggle.html): one button going light →
 * dark → system → light, which switches the open page at once and remembers the choice in
 * the cookie the server reads to serve every later page in that theme
 * (agentdash/core/theme.py; without this module the button submits the same choice there).
 *
 * The page arrives already themed: the server set `data-theme` on `<html>` and the media of
 * the dark stylesheet (`link#theme-dark`). This module only changes those two, and tells
 * whoever paints colours itself (the timeline's canvas) through {@link onThemeChange} — also
 * when the system switches between light and dark while the choice is "system".
 *
 * @module core/theme
 */

const EVENT = "agentdash:theme";
const SYSTEM_DARK = "(prefers-color-scheme: dark)";
const DARK_MEDIA = { light: "not all", dark: "all", system: SYSTEM_DARK };
const COLOR_SCHEME = { light: "light", dark: "dark", system: "light dark" };
const NEXT = { light: "dark", dark: "system", system: "light" };

/**
 * Call `listener` whenever the page's colours change (a choice in the toggle, or the system
 * switching while the choice is "system"): CSS variables read before are stale then.
 *
 * @param {() => void} listener
 */
export function onThemeChange(listener) {
  document.addEventListener(EVENT, () => listener());
}

/** @returns {"light"|"dark"|"system"} the choice the page shows */
export function themeChoice() {
  const choice = document.documentElement.dataset.theme;
  return choice === "light" || choice === "dark" ? choice : "system";
}

/**
 * Show `choice` on this page and remember it for the next ones.
 *
 * @param {HTMLFormElement} form the toggle (its data-cookie and data-max-age)
 * @param {HTMLButtonElement} button its button
 * @param {"light"|"dark"|"system"} choice
 */
function choose(form, button, choice) {
  document.documentElement.dataset.theme = choice;
  const link = /** @type {HTMLLinkElement|null} */ (document.getElementById("theme-dark"));
  if (link) link.media = DARK_MEDIA[choice];
  document.querySelector('meta[name="color-scheme"]')?.setAttribute("content", COLOR_SCHEME[choice]);
  const label = `Theme: ${choice} (switch to ${NEXT[choice]})`;
  button.dataset.choice = choice;
  button.value = NEXT[choice];
  button.setAttribute("aria-label", label);
  button.title = label;
  const name = form.dataset.cookie;
  if (name) {
    const maxAge = Number(form.dataset.maxAge) || 31_536_000;
    const secure = location.protocol === "https:" ? "; Secure" : "";
    document.cookie = `${name}=${choice}; Path=/; Max-Age=${maxAge}; SameSite=Lax${secure}`;
  }
  document.dispatchEvent(new CustomEvent(EVENT));
}

function setup() {
  const form = /** @type {HTMLFormElement|null} */ (document.querySelector("form.theme-switch"));
  const button = /** @type {HTMLButtonElement|null} */ (form?.querySelector("button[name='theme']") ?? null);
  // Bound once, even if this module were ever loaded twice under two URLs.
  if (!form || !button || form.dataset.bound) return;
  form.dataset.bound = "1";
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const choice = NEXT[themeChoice()];
    choose(form, button, /** @type {"light"|"dark"|"system"} */ (choice));
  });
  matchMedia(SYSTEM_DARK).addEventListener("change", () => {
    if (themeChoice() === "system") document.dispatchEvent(new CustomEvent(EVENT));
  });
}

setup();
