// The web client's pure modules (nginx/www/js), run by Node's test runner:
//     node --test Tests/webclient/test_logic.mjs
// The browser tests (test_browser.py) drive the same code through the real page.

import assert from "node:assert/strict";
import { test } from "node:test";

import { API, APIError } from "../../nginx/www/js/api.mjs";
import { Avatars, ICON_NAMES } from "../../nginx/www/js/avatars.mjs";
import { LiveSync } from "../../nginx/www/js/live.mjs";
import { Inbox, normalise } from "../../nginx/www/js/model.mjs";
import { deviceFields, madeWithKey, pushSupport } from "../../nginx/www/js/push.mjs";
import {
  MAX_TEXT,
  base64UrlToBytes,
  bytesToBase64Url,
  checkText,
  initials,
  isStationKey,
  parseIdentity,
  parsePasscode,
  parseStation,
  stateWord,
} from "../../nginx/www/js/rules.mjs";

const received = (peer, text, timestamp, seqId = null) => ({
  direction: "received",
  type: "message",
  peer,
  text,
  timestamp,
  seqId,
});
const sent = (peer, text, timestamp, seqId, state, clientId) => ({
  direction: "sent",
  type: "message",
  peer,
  text,
  timestamp,
  seqId,
  ...(state === undefined ? {} : { state }),
  ...(clientId === undefined ? {} : { clientId }),
});

test("identity: callsign upper-cased, SSID from the field or the -N suffix, at most 9 characters", () => {
  assert.deepEqual(parseIdentity(" kj7abc ", "7"), { callsign: "KJ7ABC", ssid: 7, address: "KJ7ABC-7" });
  assert.deepEqual(parseIdentity("N0CALL-10", "3"), { callsign: "N0CALL", ssid: 10, address: "N0CALL-10" });
  assert.deepEqual(parseIdentity("N0CALL", "0"), { callsign: "N0CALL", ssid: 0, address: "N0CALL" });
  assert.match(parseIdentity("", "0").error, /Enter your callsign/);
  assert.match(parseIdentity("N0-CALL-1", "0").error, /SSID/);
  assert.match(parseIdentity("N0 CALL", "0").error, /letters and digits/);
  assert.match(parseIdentity("N0CALL-16", "0").error, /0 to 15/);
  assert.match(parseIdentity("ABCDEFGH", "12").error, /longer than 9/);
  assert.deepEqual(parsePasscode(" 13023 "), { passcode: "13023" });
  assert.match(parsePasscode("").error, /passcode/);
  assert.match(parsePasscode("12a").error, /number/);
});

test("stations for To: upper case, -0 dropped, 9 characters at most", () => {
  assert.deepEqual(parseStation("kj7abc-7"), { address: "KJ7ABC-7" });
  assert.deepEqual(parseStation("KJ7ABC-0"), { address: "KJ7ABC" });
  assert.deepEqual(parseStation("APRSTEST"), { address: "APRSTEST" });
  assert.match(parseStation("").error, /Enter the station/);
  assert.match(parseStation("KJ7 ABC").error, /letters and digits/);
  assert.match(parseStation("KJ7ABCD-12").error, /9 characters/);
});

test("text: the 67-character limit and the forbidden characters are sentences, never a silent cut", () => {
  assert.equal(MAX_TEXT, 67);
  assert.deepEqual(checkText("Hello"), { count: 5, errors: [], notes: [] });
  assert.deepEqual(checkText("x".repeat(67)).errors, []);
  const long = checkText("x".repeat(70));
  assert.equal(long.count, 70);
  assert.match(long.errors[0], /^3 characters too many: an APRS message holds at most 67\.$/);
  assert.match(checkText("x".repeat(68)).errors[0], /^1 character too many/);
  assert.match(checkText("a{b").errors[0], /does not allow \{ in a message/);
  assert.match(checkText("a|b~c").errors[0], /does not allow \| ~/);
  assert.match(checkText("line\nbreak").errors[0], /control characters/);
  const accented = checkText("73 de Jürgen");
  assert.deepEqual(accented.errors, []);
  assert.match(accented.notes[0], /ASCII/);
  // Characters, not UTF-16 units: an emoji is one.
  assert.equal(checkText("😀".repeat(67)).count, 67);
});

test("sent states are words", () => {
  assert.equal(stateWord("pending"), "pending");
  assert.equal(stateWord("acked"), "delivered");
  assert.equal(stateWord("rejected"), "rejected");
  assert.equal(stateWord("expired"), "not delivered");
  assert.equal(stateWord("cancelled"), "cancelled");
  assert.equal(stateWord(undefined), null);
  assert.equal(initials("KJ7ABC-7"), "KJ");
});

test("base64url round trip for VAPID keys", () => {
  const bytes = new Uint8Array(65).map((_, index) => (index * 37 + 4) & 0xff);
  const text = bytesToBase64Url(bytes);
  assert.doesNotMatch(text, /[+/=]/);
  assert.deepEqual(base64UrlToBytes(text), bytes);
});

test("inbox: conversations by peer, newest first, unread counts, received deduplicated on timestamp", () => {
  const inbox = new Inbox();
  let result = inbox.merge([received("KJ7ABC-7", "one", 100, "1"), received("w5ago", "two", 200, null)]);
  assert.equal(result.received.length, 2);
  result = inbox.merge([received("KJ7ABC-7", "one", 100, "1")]);
  assert.equal(result.received.length, 0);
  assert.equal(result.changed, false);
  inbox.merge([received("KJ7ABC-7", "three", 300, "2"), { direction: "received", type: "ack", peer: "X", text: "a", timestamp: 301 }]);
  const list = inbox.conversations();
  assert.deepEqual(
    list.map((entry) => [entry.peer, entry.unread, entry.last.text]),
    [
      ["KJ7ABC-7", 2, "three"],
      ["W5AGO", 1, "two"],
    ],
  );
  assert.equal(inbox.totalUnread(), 3);
  assert.equal(inbox.markRead("KJ7ABC-7"), true);
  assert.equal(inbox.markRead("KJ7ABC-7"), false);
  assert.equal(inbox.unread("KJ7ABC-7"), 0);
  inbox.merge([received("KJ7ABC-7", "four", 400, "3")]);
  assert.equal(inbox.unread("KJ7ABC-7"), 1);
});

test("inbox: a sent message keeps its place while its state changes (new timestamps)", () => {
  const inbox = new Inbox();
  inbox.merge([sent("KJ7ABC-7", "hi", 100, "A1", "pending", "c-1")]);
  inbox.merge([received("KJ7ABC-7", "reply", 150, "9")]);
  inbox.merge([sent("KJ7ABC-7", "hi", 200, "A1", "acked", "c-1")]);
  const conversation = inbox.conversation("kj7abc-7");
  assert.deepEqual(
    conversation.map((entry) => [entry.direction, entry.text, entry.state]),
    [
      ["sent", "hi", "acked"],
      ["received", "reply", null],
    ],
  );
  // The send answer had the clientId, a later sync without it still updates the same entry.
  inbox.merge([sent("KJ7ABC-7", "later", 300, "B2", "pending", "c-2")]);
  inbox.merge([sent("KJ7ABC-7", "later", 310, "B2", "expired")]);
  assert.equal(inbox.conversation("KJ7ABC-7").filter((entry) => entry.text === "later").length, 1);
  assert.equal(inbox.conversation("KJ7ABC-7").find((entry) => entry.text === "later").state, "expired");
});

test("inbox: a message number used again after the first message is done is a new message", () => {
  const inbox = new Inbox();
  inbox.merge([sent("KJ7ABC-7", "first", 100, "1", "pending")]);
  inbox.merge([sent("KJ7ABC-7", "first", 200, "1", "acked")]);
  inbox.merge([sent("KJ7ABC-7", "second", 300, "1", "pending")]);
  assert.deepEqual(
    inbox.conversation("KJ7ABC-7").map((entry) => [entry.text, entry.state]),
    [
      ["first", "acked"],
      ["second", "pending"],
    ],
  );
});

test("inbox: the cursor only moves forward, and the saved form round-trips", () => {
  const inbox = new Inbox();
  inbox.advance(500);
  inbox.advance(400);
  inbox.advance("600");
  assert.equal(inbox.cursor, 500);
  inbox.merge([received("KJ7ABC-7", "one", 100, "1"), sent("KJ7ABC-7", "two", 200, "X", "pending", "c")]);
  inbox.markRead("KJ7ABC-7");
  const copy = Inbox.fromJSON(JSON.parse(JSON.stringify(inbox)));
  assert.equal(copy.cursor, 500);
  assert.deepEqual(
    copy.conversation("KJ7ABC-7").map((entry) => entry.text),
    ["one", "two"],
  );
  assert.equal(copy.unread("KJ7ABC-7"), 0);
  copy.merge([sent("KJ7ABC-7", "two", 300, "X", "acked", "c")]);
  assert.equal(copy.conversation("KJ7ABC-7")[1].state, "acked");
  assert.equal(Inbox.fromJSON({ version: 9 }).cursor, 0);
  assert.equal(Inbox.fromJSON("garbage").entries.size, 0);
});

test("normalise: only well-formed messages; seqId only as a string; state only on sent ones", () => {
  assert.equal(normalise({ direction: "received", peer: "A", text: "t", timestamp: 1.5 }), null);
  assert.equal(normalise({ direction: "other", peer: "A", text: "t", timestamp: 1 }), null);
  assert.equal(normalise({ direction: "received", peer: "A", text: "t", timestamp: 1, seqId: 42 }).seqId, null);
  assert.equal(normalise({ direction: "received", peer: "A", text: "t", timestamp: 1, state: "acked" }).state, null);
});

/** A fetch stand-in that answers from a list of [status, body] (a body that is a string is sent as is). */
function fakeFetch(answers, seen = []) {
  return async (url, init) => {
    seen.push({ url, body: JSON.parse(init.body) });
    const [status, body] = answers.shift();
    if (status === 0) throw new TypeError("Failed to fetch");
    return new Response(typeof body === "string" ? body : JSON.stringify(body), { status });
  };
}

test("api: the server's error text, non-JSON as a network failure, success without error", async () => {
  const seen = [];
  const api = new API(
    "http://host/base/v1/",
    fakeFetch(
      [
        [401, { error: "auth does not match the callsign's APRS-IS passcode" }],
        [502, "<html>bad gateway</html>"],
        [200, { messages: [], serverTime: 5 }],
        [0, null],
        [400, { messages: [] }],
      ],
      seen,
    ),
  );
  await assert.rejects(api.call("register", { a: 1 }), (error) => {
    assert.ok(error instanceof APIError);
    assert.equal(error.status, 401);
    assert.equal(error.message, "auth does not match the callsign's APRS-IS passcode");
    assert.equal(error.network, false);
    return true;
  });
  assert.equal(seen[0].url, "http://host/base/v1/register");
  assert.deepEqual(seen[0].body, { a: 1 });
  await assert.rejects(api.call("sync", {}), (error) => error.network && error.status === 502);
  assert.deepEqual(await api.call("sync", {}), { messages: [], serverTime: 5 });
  await assert.rejects(api.call("sync", {}), (error) => error.network && /cannot reach/.test(error.message));
  // A 4xx without `error` is a success (PROTOCOL.md, "Errors").
  assert.deepEqual(await api.call("sync", {}), { messages: [] });
});

/** A LiveSync whose sleeps are recorded and return at once; stops itself after `rounds` calls. */
function liveRig(answers, options = {}) {
  const bodies = [];
  const sleeps = [];
  const statuses = [];
  let clock = 0;
  let live;
  const call = async (body) => {
    bodies.push(body);
    const next = answers.shift();
    if (!next) {
      live.stop();
      throw new APIError("cancelled", { aborted: true, network: true });
    }
    clock += next.takes ?? 0;
    if (next.error) throw next.error;
    return next.answer;
  };
  let cursor = 0;
  live = new LiveSync({
    call,
    cursor: () => cursor,
    onAnswer: (answer) => {
      if (answer.serverTime > cursor) cursor = answer.serverTime;
    },
    onStatus: (status) => statuses.push(status.mode),
    now: () => clock,
    sleeper: async (ms) => {
      sleeps.push(ms);
    },
    ...options,
  });
  return { live, bodies, sleeps, statuses };
}

test("live: long polls from the cursor, one after another", async () => {
  const rig = liveRig(
    [
      { answer: { messages: [{}], serverTime: 10 }, takes: 200 },
      { answer: { messages: [], serverTime: 10 }, takes: 50000 },
    ],
    { longPoll: true, maxWait: 300 },
  );
  rig.live.start();
  await rig.live.done;
  assert.deepEqual(rig.bodies.slice(0, 3), [
    { since: 0, wait: 50 },
    { since: 10, wait: 50 },
    { since: 10, wait: 50 },
  ]);
  assert.deepEqual(rig.sleeps, []);
  assert.deepEqual(rig.statuses, ["live", "live"]);
});

test("live: a server that ignores wait (empty answers at once) gets short polls", async () => {
  const quick = { answer: { messages: [], serverTime: 1 }, takes: 5 };
  const rig = liveRig([quick, quick, quick, quick], { longPoll: true, pollMs: 1000 });
  rig.live.start();
  await rig.live.done;
  assert.equal(rig.bodies[0].wait, 50);
  assert.equal(rig.bodies[3].wait, undefined);
  assert.deepEqual(rig.statuses, ["live", "live", "polling", "polling"]);
});

test("live: after falling back to short polls it tries long polls again five minutes later", async () => {
  const quick = { answer: { messages: [], serverTime: 1 }, takes: 5 };
  const later = { answer: { messages: [], serverTime: 1 }, takes: 5 * 60 * 1000 };
  const rig = liveRig([quick, quick, quick, quick, later, quick], { longPoll: true, pollMs: 1000 });
  rig.live.start();
  await rig.live.done;
  assert.deepEqual(
    rig.bodies.slice(0, 6).map((body) => body.wait),
    [50, 50, 50, undefined, undefined, 50],
  );
});

test("live: a 400 for wait falls back to short polls; failures back off and resume from the cursor", async () => {
  const rig = liveRig(
    [
      { error: new APIError("wait must be between 0 and 300", { status: 400 }) },
      { answer: { messages: [{}], serverTime: 7 } },
      { error: new APIError("cannot reach the server (offline?)", { network: true }) },
      { error: new APIError("cannot reach the server (offline?)", { network: true }) },
      { error: new APIError("the API service is not running; retry later", { status: 502 }) },
      { answer: { messages: [], serverTime: 9 } },
    ],
    { longPoll: true, pollMs: 1000 },
  );
  rig.live.start();
  await rig.live.done;
  assert.equal(rig.bodies[0].wait, 50);
  assert.deepEqual(rig.bodies.slice(1), [{ since: 0 }, { since: 7 }, { since: 7 }, { since: 7 }, { since: 7 }, { since: 9 }]);
  assert.deepEqual(rig.sleeps, [1000, 1000, 2000, 4000, 1000]);
  assert.deepEqual(rig.statuses, ["polling", "offline", "offline", "offline", "polling"]);
});

test("live: a 401 stops the loop and says so", async () => {
  const rig = liveRig([{ error: new APIError("auth does not match", { status: 401 }) }]);
  rig.live.start();
  await rig.live.done;
  assert.deepEqual(rig.statuses, ["stopped"]);
  assert.equal(rig.live.running, false);
});

/** sw.js in a fake worker scope: its listeners, what it showed, opened and posted. */
async function serviceWorker({ windows = [] } = {}) {
  const { readFile } = await import("node:fs/promises");
  const vm = await import("node:vm");
  const source = await readFile(new URL("../../nginx/www/sw.js", import.meta.url), "utf8");
  const rig = { listeners: {}, shown: [], opened: [], posted: [] };
  const self = {
    addEventListener: (type, listener) => {
      rig.listeners[type] = listener;
    },
    registration: {
      scope: "https://aprs.example.org/",
      showNotification: async (title, options) => rig.shown.push({ title, options }),
    },
    clients: {
      matchAll: async () =>
        windows.map((url) => ({
          url,
          focus: async () => {},
          postMessage: (message) => rig.posted.push({ url, message }),
        })),
      openWindow: async (url) => rig.opened.push(url),
      claim: async () => {},
    },
    skipWaiting: async () => {},
  };
  vm.runInNewContext(source, { self, URL, console, caches: {}, fetch: async () => {} });
  rig.dispatch = async (type, event) => {
    let pending = Promise.resolve();
    rig.listeners[type]({ ...event, waitUntil: (promise) => (pending = promise) });
    await pending;
  };
  return rig;
}

/** Objects made inside the worker's context, as plain values (deepStrictEqual compares prototypes). */
const plain = (value) => JSON.parse(JSON.stringify(value));

const pushEvent = (payload) => ({
  data: { json: () => JSON.parse(payload), text: () => payload },
});

test("service worker: a push shows one notification per station and wakes open pages", async () => {
  const rig = await serviceWorker({ windows: ["https://aprs.example.org/#/"] });
  for (const type of ["install", "activate", "fetch", "push", "notificationclick"]) {
    assert.equal(typeof rig.listeners[type], "function", type);
  }
  const payload = { title: "KJ7ABC-7", body: "Are you on the summit?", fromCall: "KJ7ABC-7", to: "N0CALL-7", seqId: "12", count: "1" };
  await rig.dispatch("push", pushEvent(JSON.stringify(payload)));
  assert.equal(rig.shown.length, 1);
  assert.equal(rig.shown[0].title, "KJ7ABC-7");
  assert.equal(rig.shown[0].options.body, "Are you on the summit?");
  assert.equal(rig.shown[0].options.tag, "aprs-cloud-N0CALL-7");
  assert.deepEqual(plain(rig.shown[0].options.data), { peer: "KJ7ABC-7", url: "./#/c/KJ7ABC-7" });
  assert.deepEqual(plain(rig.posted), [{ url: "https://aprs.example.org/#/", message: { type: "push" } }]);
  // A failed send names the addressee; a push that is not JSON still shows something.
  await rig.dispatch("push", pushEvent(JSON.stringify({ kind: "sendFailed", to: "W5AGO", seqId: "A1" })));
  assert.equal(rig.shown[1].title, "Message to W5AGO not delivered");
  assert.deepEqual(plain(rig.shown[1].options.data), { peer: "W5AGO", url: "./#/c/W5AGO" });
  await rig.dispatch("push", pushEvent("plain text"));
  assert.equal(rig.shown[2].title, "New APRS message");
  assert.equal(rig.shown[2].options.body, "plain text");
});

test("service worker: a tap opens the conversation, in the open page or a new window", async () => {
  const closed = [];
  const notification = (peer) => ({
    notification: { data: { peer, url: `./#/c/${peer}` }, close: () => closed.push(peer) },
  });
  const none = await serviceWorker();
  await none.dispatch("notificationclick", notification("KJ7ABC-7"));
  assert.deepEqual(none.opened, ["https://aprs.example.org/#/c/KJ7ABC-7"]);
  const open = await serviceWorker({ windows: ["https://aprs.example.org/"] });
  await open.dispatch("notificationclick", notification("W5AGO"));
  assert.deepEqual(open.opened, []);
  assert.deepEqual(plain(open.posted), [{ url: "https://aprs.example.org/", message: { type: "open", peer: "W5AGO" } }]);
  assert.deepEqual(closed, ["KJ7ABC-7", "W5AGO"]);
});

test("push: offered only with /v1/info's webpush and a VAPID key; the register fields are the subscription's", () => {
  assert.match(pushSupport(null).reason, /does not offer notifications/);
  assert.match(pushSupport({ features: ["longpoll", "send"] }).reason, /does not send Web Push/);
  assert.match(pushSupport({ features: ["webpush"] }).reason, /does not send Web Push/);
  // Node has no service worker: a browser without one is told so.
  assert.match(pushSupport({ features: ["webpush"], vapidPublicKey: "BAAA" }).reason, /cannot receive Web Push/);
  const key = bytesToBase64Url(new Uint8Array([4, 1, 2, 3]));
  const subscription = {
    endpoint: "https://push.example/abc",
    options: { applicationServerKey: new Uint8Array([4, 1, 2, 3]).buffer },
    toJSON: () => ({ endpoint: "https://push.example/abc", expirationTime: null, keys: { p256dh: "P", auth: "A" } }),
  };
  assert.deepEqual(deviceFields(subscription), {
    platform: "webpush",
    pushToken: "https://push.example/abc",
    pushKeys: { p256dh: "P", auth: "A" },
  });
  assert.equal(madeWithKey(subscription, key), true);
  assert.equal(madeWithKey(subscription, bytesToBase64Url(new Uint8Array([4, 9]))), false);
});

test("live: kick({reconnect}) drops a held long poll and starts a new one from the cursor", async () => {
  const bodies = [];
  let release;
  const held = new Promise((resolve) => (release = resolve));
  let live;
  const call = (body, { signal }) => {
    bodies.push(body);
    if (bodies.length === 1) {
      return new Promise((_, reject) => {
        signal.addEventListener("abort", () => reject(new APIError("cancelled", { aborted: true, network: true })));
        release();
      });
    }
    live.stop();
    return Promise.resolve({ messages: [], serverTime: 3 });
  };
  const statuses = [];
  live = new LiveSync({
    call,
    cursor: () => 2,
    onAnswer: () => {},
    onStatus: (status) => statuses.push(status.mode),
    longPoll: true,
    maxWait: 20,
  });
  live.start();
  await held;
  live.kick({ reconnect: true });
  await live.done;
  assert.deepEqual(bodies, [
    { since: 2, wait: 20 },
    { since: 2, wait: 20 },
  ]);
  assert.deepEqual(statuses, [], "a reconnect is not an outage");
});

// ---------------------------------------------------------------------------------------------------
// Hostile answers: every field, prototype names, long strings, control and bidi characters, wrong types.

const LONG = "x".repeat(10240);
const HOSTILE = [
  "__proto__", "constructor", "toString", "hasOwnProperty", LONG, "\u202e\u0000\u001b\u2066", "", null, true, 0, -1,
  1.5, 1e300, Number.MAX_SAFE_INTEGER, [], [1, "a"], {}, JSON.parse('{"__proto__":{"polluted":1},"constructor":{}}'),
];
const FIELDS = ["direction", "type", "peer", "text", "timestamp", "seqId", "state", "clientId", "to"];

test("hostile: the inbox takes every hostile value in every field without throwing or polluting", () => {
  const inbox = new Inbox();
  for (const field of FIELDS) {
    for (const value of HOSTILE) {
      const raw = { ...received("KJ7ABC", "fine", 100 + inbox.sequence), [field]: value };
      assert.doesNotThrow(() => inbox.merge([raw]), `${field}=${String(value).slice(0, 20)}`);
      assert.doesNotThrow(() => inbox.merge([{ ...sent("KJ7ABC", "s", 5000 + inbox.sequence, "1", "pending", "c1"), [field]: value }]));
    }
  }
  for (const whole of HOSTILE) assert.doesNotThrow(() => inbox.merge(whole));
  assert.doesNotThrow(() => inbox.merge(HOSTILE));
  for (const peer of ["__PROTO__", "CONSTRUCTOR"]) inbox.merge([received(peer, "hi", 9000 + peer.length)]);
  const peers = inbox.conversations().map((conversation) => conversation.peer);
  assert.ok(peers.includes("__PROTO__") && peers.includes("CONSTRUCTOR"));
  assert.equal(inbox.unread("__PROTO__"), 2, "the hostile peer value and the ordinary message");
  assert.ok(inbox.markRead("CONSTRUCTOR"));
  for (const time of HOSTILE) inbox.advance(time, 1e12);
  assert.equal(inbox.cursor, 0, "no hostile serverTime moved the cursor");
  inbox.advance(1e12 + 5, 1e12);
  assert.equal(inbox.cursor, 1e12 + 5);
  assert.equal({}.polluted, undefined);
});

test("hostile: avatars look names up as own keys only; `constructor` and `__proto__` icons are no icons", async () => {
  assert.ok(ICON_NAMES.includes("radio"));
  assert.ok(!ICON_NAMES.includes("constructor"));
  const avatars = new Avatars(async () => JSON.parse(
    '{"avatars":{"constructor":{"icon":"constructor","hash":"icon:constructor"},"__proto__":{"hash":"x"},' +
      '"K1ABC":{"icon":"__proto__","image":"\\u0000","hash":"' + "a".repeat(64) + '"},"TOSTRING":"string"}}',
  ));
  for (const value of HOSTILE) assert.doesNotThrow(() => avatars.note(value));
  avatars.note(JSON.parse('{"__proto__":"icon:constructor","constructor":"icon:__proto__","K1ABC":"' + "a".repeat(64) +
    '","TOSTRING":"' + "b".repeat(64) + '","BAD":5,"LONG":"' + LONG + '"}'));
  assert.equal(avatars.known.get("constructor").icon, "__proto__");
  assert.deepEqual([...avatars.wanted.keys()].sort(), ["K1ABC", "TOSTRING"]);
  assert.equal(await avatars.fetchWanted(), true);
  assert.deepEqual(avatars.known.get("K1ABC"), { hash: "a".repeat(64), icon: "__proto__", image: null });
  assert.equal(avatars.known.has("TOSTRING"), false);
  const failing = new Avatars(async () => HOSTILE);
  failing.note({ K1ABC: "c".repeat(64) });
  assert.equal(await failing.fetchWanted(), false);
  assert.equal({}.polluted, undefined);
});

test("hostile: an answer the page cannot take in is logged and the sync loop goes on", async () => {
  const errors = [];
  let calls = 0;
  let live;
  live = new LiveSync({
    call: async () => {
      calls += 1;
      if (calls > 3) {
        live.stop();
        throw new APIError("cancelled", { aborted: true, network: true });
      }
      return { messages: [{}], serverTime: calls };
    },
    cursor: () => 0,
    onAnswer: () => {
      throw new TypeError("cannot render");
    },
    onError: (error) => errors.push(error.message),
    longPoll: true,
    now: () => 0,
    sleeper: async () => {},
  });
  live.start();
  await live.done;
  assert.equal(calls, 4);
  assert.deepEqual(errors, ["cannot render", "cannot render", "cannot render"]);
});

test("hostile: a paged answer syncs on at once, but only while the cursor moves", async () => {
  const rig = liveRig(
    [
      { answer: { messages: [{}], serverTime: 10, more: true }, takes: 5 },
      { answer: { messages: [{}], serverTime: 10, more: true }, takes: 5 },
      { answer: { messages: [], serverTime: 10 }, takes: 5 },
    ],
    { longPoll: false, pollMs: 1000 },
  );
  rig.live.start();
  await rig.live.done;
  assert.deepEqual(rig.bodies.map((body) => body.since), [0, 10, 10, 10]);
  assert.deepEqual(rig.sleeps, [1000, 1000]);
});

test("station keys: only base64url of 43 to 128 characters goes into a header", () => {
  assert.ok(isStationKey("q3P" + "a".repeat(40)));
  for (const value of [...HOSTILE, "a".repeat(42), "a".repeat(42) + "\n", "a".repeat(43) + "="]) {
    assert.equal(isStationKey(value), false, String(value).slice(0, 20));
  }
});
