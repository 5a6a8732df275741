// WCAG 2 contrast of what the page shows, run in the page by test_themes.py (page.evaluate).
//
// Text: every visible text node, the ::before/::after text of styles and the value or
// placeholder of every form field, against the colour actually behind it — the element's own
// background composited over its ancestors' (through translucent backgrounds and opacity) up
// to the page. AA: 4.5:1, or 3:1 for large text (24 px, or 18.66 px bold).
// UI components, 3:1: a form field's edge against what surrounds it, a switch's track, an
// icon in a button. Disabled controls are exempt, as WCAG says.
//
// Returns {checked, failures: [{what, text, ratio, needs, fg, bg}]}.
() => {
  const WHITE = { r: 255, g: 255, b: 255, a: 1 };
  const TRANSPARENT = { r: 0, g: 0, b: 0, a: 0 };
  const styles = new Map();
  const styleOf = (el, pseudo) => {
    if (pseudo) return getComputedStyle(el, pseudo);
    let style = styles.get(el);
    if (!style) {
      style = getComputedStyle(el);
      styles.set(el, style);
    }
    return style;
  };

  /** "rgb(1, 2, 3)" / "rgba(1, 2, 3, 0.5)"; anything else is reported, never guessed. */
  const unparsed = new Set();
  const parse = (value) => {
    const m = /^rgba?\(([^)]*)\)$/.exec(value.trim());
    if (!m) {
      if (value !== "transparent") unparsed.add(value);
      return TRANSPARENT;
    }
    const [r, g, b, a = 1] = m[1].split(/[\s,/]+/).filter(Boolean).map(Number);
    return { r, g, b, a };
  };
  const over = (top, bottom) => {
    const a = top.a + bottom.a * (1 - top.a);
    if (a === 0) return TRANSPARENT;
    const mix = (t, b) => (t * top.a + b * bottom.a * (1 - top.a)) / a;
    return { r: mix(top.r, bottom.r), g: mix(top.g, bottom.g), b: mix(top.b, bottom.b), a };
  };
  /** The colour on screen of `color` painted inside `el` (over its background). */
  const onScreen = (el, color) => {
    let c = color;
    for (let node = el; node; node = node.parentElement) {
      const style = styleOf(node);
      c = over(c, parse(style.backgroundColor));
      const opacity = Number(style.opacity);
      if (opacity < 1) c = { ...c, a: c.a * opacity };
    }
    return over(c, WHITE);
  };
  const luminance = ({ r, g, b }) => {
    const f = (v) => {
      const s = v / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const ratioOf = (x, y) => {
    const [hi, lo] = [luminance(x), luminance(y)].sort((p, q) => q - p);
    return (hi + 0.05) / (lo + 0.05);
  };
  const hex = ({ r, g, b }) =>
    "#" + [r, g, b].map((v) => Math.round(v).toString(16).padStart(2, "0")).join("");
  const describe = (el) => {
    let s = el.tagName.toLowerCase();
    if (el.id) s += `#${el.id}`;
    if (el.classList.length) s += "." + [...el.classList].join(".");
    const parent = el.parentElement?.closest("[id]");
    return parent && parent !== el ? `${s} in #${parent.id}` : s;
  };
  const visible = (el) =>
    el.checkVisibility({ opacityProperty: true, visibilityProperty: true }) &&
    el.getClientRects().length > 0;
  const exempt = (el) => Boolean(el.closest(":disabled, [aria-disabled='true'], [inert]"));
  const large = (style) => {
    const px = parseFloat(style.fontSize);
    return px >= 24 || (px >= 18.66 && Number(style.fontWeight) >= 700);
  };

  const failures = [];
  let checked = 0;
  const check = (what, el, text, fgColor, needs) => {
    checked += 1;
    const bg = onScreen(el, TRANSPARENT);
    const fg = onScreen(el, fgColor);
    const ratio = ratioOf(fg, bg);
    if (ratio + 1e-9 < needs) {
      failures.push({ what, text: text.slice(0, 60), ratio: Math.round(ratio * 100) / 100, needs, fg: hex(fg), bg: hex(bg) });
    }
  };

  // Text nodes.
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.nodeValue || "";
    const el = node.parentElement;
    if (!text.trim() || !el || el.closest("script, style, template, noscript, option")) continue;
    if (!visible(el) || exempt(el)) continue;
    range.selectNodeContents(node);
    if (![...range.getClientRects()].some((r) => r.width > 0 && r.height > 0)) continue;
    const style = styleOf(el);
    check(describe(el), el, text.trim(), parse(style.color), large(style) ? 3 : 4.5);
  }

  // Text that styles add (::before, ::after), e.g. a row's column name on a phone.
  for (const el of document.body.querySelectorAll("*")) {
    if (!visible(el) || exempt(el)) continue;
    for (const pseudo of ["::before", "::after"]) {
      const style = styleOf(el, pseudo);
      const content = style.content;
      if (!content || content === "none" || content === "normal" || style.display === "none") continue;
      if (!/[\p{L}\p{N}]|attr\(/u.test(content)) continue; // icons are checked as components
      check(`${describe(el)}${pseudo}`, el, content, parse(style.color), large(style) ? 3 : 4.5);
    }
  }

  // Form fields: their text, or their placeholder; and their edge.
  const fields = document.body.querySelectorAll(
    "input:not([type=hidden]):not([type=checkbox]):not([type=radio]):not([type=submit]):not([type=button]), textarea, select",
  );
  for (const el of fields) {
    if (!visible(el) || exempt(el)) continue;
    const style = styleOf(el);
    const value = el instanceof HTMLSelectElement ? el.selectedOptions[0]?.text || "" : el.value;
    if (value) check(describe(el), el, value, parse(style.color), large(style) ? 3 : 4.5);
    else if (el.placeholder) {
      const placeholder = getComputedStyle(el, "::placeholder");
      check(`${describe(el)}::placeholder`, el, el.placeholder, parse(placeholder.color), 4.5);
    }
    // The edge, against what is around the field; or the field's own fill, if it stands out.
    const around = el.parentElement ? onScreen(el.parentElement, TRANSPARENT) : WHITE;
    const edge = onScreen(el.parentElement || el, parse(style.borderTopColor));
    const fill = onScreen(el, TRANSPARENT);
    checked += 1;
    const ratio = Math.max(
      parseFloat(style.borderTopWidth) > 0 ? ratioOf(edge, around) : 1,
      ratioOf(fill, around),
    );
    if (ratio + 1e-9 < 3) {
      failures.push({ what: `${describe(el)} (edge)`, text: el.placeholder || value, ratio: Math.round(ratio * 100) / 100, needs: 3, fg: hex(edge), bg: hex(around) });
    }
  }

  // Switches' tracks, and icons in buttons.
  for (const track of document.body.querySelectorAll(".switch .track")) {
    if (!visible(track) || exempt(track.closest(".switch")?.querySelector("input") || track)) continue;
    checked += 1;
    const fill = onScreen(track, TRANSPARENT);
    const around = onScreen(track.parentElement, TRANSPARENT);
    const ratio = ratioOf(fill, around);
    if (ratio + 1e-9 < 3) {
      failures.push({ what: `${describe(track.parentElement)} (track)`, text: track.parentElement.textContent.trim(), ratio: Math.round(ratio * 100) / 100, needs: 3, fg: hex(fill), bg: hex(around) });
    }
  }
  for (const svg of document.body.querySelectorAll("button svg")) {
    const button = svg.closest("button");
    if (!visible(svg) || exempt(button)) continue;
    check(`${describe(button)} (icon)`, button, button.getAttribute("aria-label") || "", parse(styleOf(button).color), 3);
  }

  for (const value of unparsed) failures.push({ what: "a colour this check cannot read", text: value, ratio: 0, needs: 0, fg: "", bg: "" });
  return { checked, failures };
}
