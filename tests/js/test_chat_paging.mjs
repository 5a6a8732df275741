// dashboard/chat_older.js, chat_newer.js, chat_paging.js: the chat's pages while the reader
// jumps to the latest. A page that comes back after the window was read anew is not inserted
// (it would cut the new window, or put old messages above it with a gap), and the list is busy
// while either paging loads. The modules build a few DOM nodes: a small stand-in for `document`
// is enough (no layout is read; node has no IntersectionObserver, so nothing loads by itself).
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import "./static_tree.mjs";

/** Just what el(), the sentinels and the list use of an element. */
class FakeElement {
  /** @param {string} tag */
  constructor(tag) {
    this.tag = tag;
    this.className = "";
    this.textContent = "";
    this.parent = null;
    this.children = [];
    this.attributes = {};
  }

  setAttribute(name, value) {
    this.attributes[name] = value;
  }

  getAttribute(name) {
    return this.attributes[name] ?? null;
  }

  get hidden() {
    return "hidden" in this.attributes; // a reflected attribute, as in the DOM
  }

  set hidden(value) {
    if (value) this.attributes.hidden = "";
    else delete this.attributes.hidden;
  }

  addEventListener() {}

  append(...nodes) {
    for (const node of nodes) this.insertBefore(node, null);
  }

  prepend(node) {
    this.insertBefore(node, this.children[0] ?? null);
  }

  insertBefore(node, where) {
    if (typeof node === "string") return;
    node.remove();
    const at = where ? this.children.indexOf(where) : -1;
    this.children.splice(at < 0 ? this.children.length : at, 0, node);
    node.parent = this;
  }

  after(node) {
    const parent = this.parent;
    if (!parent) return; // as the DOM's: nothing without a parent
    parent.insertBefore(node, parent.children[parent.children.indexOf(this) + 1] ?? null);
  }

  remove() {
    if (!this.parent) return;
    this.parent.children.splice(this.parent.children.indexOf(this), 1);
    this.parent = null;
  }

  get isConnected() {
    return this.parent !== null;
  }
}

globalThis.document = /** @type {any} */ ({ createElement: (tag) => new FakeElement(tag) });

const { NewerPages } = await import("../../agentdash/dashboard/static/dashboard/js/chat/chat_newer.js");
const { OlderPages } = await import("../../agentdash/dashboard/static/dashboard/js/chat/chat_older.js");

/** A fetch whose answers the test gives, one call at a time. */
function held() {
  const calls = [];
  const fetch = (position) =>
    new Promise((resolve, reject) => calls.push({ position, resolve, reject }));
  return { calls, fetch };
}

const settled = () => new Promise((done) => setImmediate(done));

function newer(list = new FakeElement("ol")) {
  const { calls, fetch } = held();
  const inserted = [];
  const pages = new NewerPages({
    list,
    fetch,
    insert: (events, last, after) => inserted.push({ events, last, after }),
    jump: () => {},
  });
  return { list, calls, inserted, pages };
}

describe("NewerPages", () => {
  test("a page is inserted when the window is still cut where it was asked", async () => {
    const { calls, inserted, pages } = newer();
    pages.cutAfter(100, null);
    const loading = pages.load();
    calls[0].resolve({ events: [{ id: "e101" }], after: 150 });
    await loading;
    assert.deepEqual(inserted, [{ events: [{ id: "e101" }], last: false, after: 100 }]);
    assert.equal(pages.after, 150);
    assert.equal(pages.state, "idle");
  });

  test("a page that returns after a jump reset the window is dropped: not inserted, not cut", async () => {
    const { calls, inserted, pages } = newer();
    pages.cutAfter(100, null);
    const loading = pages.load();
    pages.reset(); // the reader jumped to the latest while the page was on its way
    calls[0].resolve({ events: [{ id: "e101" }], after: 150 });
    await loading;
    assert.deepEqual(inserted, []);
    assert.equal(pages.cut, false); // the page's cursor (150) did not cut the new window
    assert.equal(pages.item.isConnected, false);
    assert.equal(pages.state, "idle");
  });

  test("a jump's catch-up made while a stale page loads gets its own page", async () => {
    const { list, calls, inserted, pages } = newer();
    pages.cutAfter(100, null);
    const stale = pages.load();
    pages.reset();
    pages.cutAfter(980, null); // the latest page showed up to 980; live events came after
    await pages.load(); // the catch-up: one page at a time, so nothing yet
    assert.equal(calls.length, 1);
    calls[0].resolve({ events: [{ id: "e101" }], after: 150 });
    await stale;
    assert.deepEqual(
      calls.map((call) => call.position),
      [100, 980],
    );
    calls[1].resolve({ events: [{ id: "e981" }], after: null });
    await settled();
    assert.deepEqual(inserted, [{ events: [{ id: "e981" }], last: true, after: 980 }]);
    assert.equal(pages.cut, false);
    assert.equal(list.getAttribute("aria-busy"), "false");
  });

  test("a failure after a jump leaves no retry button for the old window", async () => {
    const { calls, pages } = newer();
    pages.cutAfter(100, null);
    const loading = pages.load();
    pages.reset();
    calls[0].reject(new Error("offline"));
    await loading;
    assert.equal(pages.state, "idle");
  });

  test("a failure in the same window leaves the retry", async () => {
    const { calls, pages } = newer();
    pages.cutAfter(100, null);
    const loading = pages.load();
    calls[0].reject(new Error("offline"));
    await loading;
    assert.equal(pages.state, "failed");
    assert.equal(pages.after, 100);
  });
});

describe("the bar below the list", () => {
  test("shows while the window is cut and goes with the cut; it sits right after the list", () => {
    const panel = new FakeElement("section");
    const list = new FakeElement("ol");
    const composer = new FakeElement("form");
    panel.append(list, composer);
    let jumps = 0;
    const pages = new NewerPages({ list, fetch: null, insert: () => {}, jump: () => jumps++ });
    assert.deepEqual(
      panel.children.map((child) => child.className || child.tag),
      ["ol", "chat-jump", "form"],
    );
    assert.equal(pages.bar.hidden, true);
    pages.cutAfter(100, null);
    assert.equal(pages.bar.hidden, false);
    pages.reset();
    assert.equal(pages.bar.hidden, true);
  });
});

describe("OlderPages", () => {
  function older() {
    const list = new FakeElement("ol");
    const { calls, fetch } = held();
    const inserted = [];
    const pages = new OlderPages({ list, fetch, insert: (events) => inserted.push(events) });
    return { list, calls, inserted, pages };
  }

  test("a page that returns after the cursor was set anew is dropped (no gap above the latest)", async () => {
    const { calls, inserted, pages } = older();
    pages.setCursor(200);
    const loading = pages.load();
    pages.setCursor(950); // the jump's latest page starts at 950
    calls[0].resolve({ events: [{ id: "e150" }], before: 150 });
    await loading;
    assert.deepEqual(inserted, []);
    assert.equal(pages.before, 950);
    assert.equal(pages.state, "idle");
  });

  test("a page in the same window is inserted and moves the cursor back", async () => {
    const { calls, inserted, pages } = older();
    pages.setCursor(200);
    const loading = pages.load();
    calls[0].resolve({ events: [{ id: "e150" }], before: 150 });
    await loading;
    assert.deepEqual(inserted, [[{ id: "e150" }]]);
    assert.equal(pages.before, 150);
  });
});

describe("the list is busy while either paging loads", () => {
  test("the older page done while a newer one loads leaves the list busy", async () => {
    const list = new FakeElement("ol");
    const older = held();
    const olderPages = new OlderPages({ list, fetch: older.fetch, insert: () => {} });
    const { calls, pages } = newer(list);
    olderPages.setCursor(200);
    pages.cutAfter(800, null);
    const up = olderPages.load();
    const down = pages.load();
    assert.equal(list.getAttribute("aria-busy"), "true");
    older.calls[0].resolve({ events: [], before: 150 });
    await up;
    assert.equal(list.getAttribute("aria-busy"), "true"); // the newer page is still on its way
    calls[0].resolve({ events: [], after: 850 });
    await down;
    assert.equal(list.getAttribute("aria-busy"), "false");
  });
});
