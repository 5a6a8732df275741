/**
 * The session page's Export menu (docs/EXPORT.md): downloads of the session as JSON, of
 * every trace as OTLP (JSON or protobuf), and of the trace of the span whose details are
 * open — those links follow the timeline's selection (its "select" and "close" events). The downloads
 * themselves are plain links to the server; nothing here reads span data.
 *
 * @module dashboard/export_menu
 */

const PLACEHOLDER = "Open a span to export its trace";

/**
 * @param {object} parts
 * @param {Pick<import("../timeline/timeline.js").Timeline, "on">} parts.timeline
 * @param {HTMLDetailsElement|null} [parts.menu] the `<details>` menu
 */
export function setupExportMenu({
  timeline,
  menu = /** @type {HTMLDetailsElement|null} */ (document.getElementById("export-menu")),
}) {
  if (!menu) return;
  const links = /** @type {NodeListOf<HTMLAnchorElement>} */ (
    menu.querySelectorAll("[data-export='trace']")
  );
  const note = /** @type {HTMLElement} */ (menu.querySelector(".export-note"));
  const base = menu.dataset.traceBase || "";

  /** @param {string} traceId the open span's trace; "" when none is open */
  const follow = (traceId) => {
    for (const link of links) {
      if (traceId) {
        const query = link.dataset.query || "";
        link.setAttribute("href", `${base}${encodeURIComponent(traceId)}/${query}`);
        link.removeAttribute("aria-disabled");
      } else {
        link.removeAttribute("href"); // no href: not a link, not focusable
        link.setAttribute("aria-disabled", "true");
      }
    }
    if (traceId) {
      note.textContent = `trace ${traceId}`;
      note.title = traceId;
    } else {
      note.textContent = PLACEHOLDER;
      note.removeAttribute("title");
    }
  };
  timeline.on("select", (node) => follow(node.trace));
  timeline.on("close", () => follow(""));
  follow("");

  // A menu closes as menus do: a choice made, a click elsewhere, Esc.
  menu.addEventListener("click", (event) => {
    const target = /** @type {Element} */ (event.target);
    if (target.closest("a[href]")) menu.open = false;
  });
  document.addEventListener("click", (event) => {
    if (menu.open && !menu.contains(/** @type {Node} */ (event.target))) menu.open = false;
  });
  menu.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && menu.open) {
      event.preventDefault();
      event.stopPropagation(); // the page's own Esc (close the details) is for another time
      menu.open = false;
      /** @type {HTMLElement} */ (menu.querySelector("summary")).focus();
    }
  });
}
