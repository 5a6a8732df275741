// dashboard/session/composer.js: a chat message with no answer goes again on the same socket,
// later and later, until it is answered or the socket closes.
import assert from "node:assert/strict";
import { beforeEach, describe, mock, test } from "node:test";

import {
  RESEND_FIRST_MS,
  RESEND_MOST_MS,
  resender,
} from "../../agentdash/dashboard/static/dashboard/js/session/composer.js";

describe("resender", () => {
  beforeEach(() => mock.timers.enable({ apis: ["setTimeout"] }));

  const setUp = () => {
    const sent = [];
    const waiting = new Set();
    let open = true;
    const again = resender(
      (message) => open && (sent.push(message.client_id), true),
      (message) => waiting.has(message.client_id),
    );
    const send = (id) => {
      waiting.add(id);
      again.arm({ client_id: id });
    };
    return { sent, waiting, again, send, close: () => (open = false) };
  };

  test("sends again while unanswered, each wait twice the last, up to the most", () => {
    const { sent, send } = setUp();
    send("c1");
    mock.timers.tick(RESEND_FIRST_MS - 1);
    assert.deepEqual(sent, []);
    mock.timers.tick(1);
    assert.deepEqual(sent, ["c1"]);
    mock.timers.tick(RESEND_FIRST_MS * 2);
    assert.deepEqual(sent, ["c1", "c1"]);
    let waited = RESEND_FIRST_MS * 4;
    for (let i = 0; i < 6; i++) {
      mock.timers.tick(Math.min(waited, RESEND_MOST_MS));
      waited *= 2;
    }
    assert.equal(sent.length, 8);
    mock.timers.tick(RESEND_MOST_MS - 1);
    assert.equal(sent.length, 8);
    mock.timers.tick(1); // never waits longer than the most
    assert.equal(sent.length, 9);
    mock.timers.reset();
  });

  test("an answered message, or every one once disarmed, goes no more", () => {
    const { sent, waiting, again, send } = setUp();
    send("c1");
    send("c2");
    send("c3");
    waiting.delete("c1"); // answered without being disarmed: its timer finds it so
    again.disarm("c2");
    mock.timers.tick(RESEND_FIRST_MS);
    assert.deepEqual(sent, ["c3"]);
    again.disarmAll(); // the socket closed: the next socket sends what is unanswered
    mock.timers.tick(RESEND_MOST_MS * 2);
    assert.deepEqual(sent, ["c3"]);
    mock.timers.reset();
  });

  test("not sent while the socket is not open, and not tried again on it", () => {
    const { sent, send, close } = setUp();
    send("c1");
    close();
    mock.timers.tick(RESEND_MOST_MS * 4);
    assert.deepEqual(sent, []);
    mock.timers.reset();
  });
});
