// The web client's pure modules (nginx/www/js), run by Node's test runner:
//     node --test Tests/webclient/test_logic.mjs
// The browser tests (test_browser.py) drive the same code through the real page.

import assert from "node:assert/strict";
import { test } from "node:test";

import { API, APIError } from "../../nginx/www/js/api.mjs";
import { Avatars, ICON_NAMES } from "../../nginx/www/js/avatars.mjs";
import { LiveSync } from "../../nginx/www/js/live.mjs";
import { Catches, Inbox, normalise } from "../../nginx/www/js/model.mjs";
import { LANGUAGES, language, pickLanguage, setLanguage, t, tn } from "../../nginx/www/js/i18n.mjs";
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
import {
  browserOffset,
  forwardDraft,
  forwardTypes,
  keyLink,
  minutesToTime,
  muteUntil,
  parseCalls,
  parseKeyLink,
  parseSsids,
  quietOffsetUpdate,
  readAudit,
  readSettings,
  settingsRequest,
  subscriptionDraft,
  timeToMinutes,
} from "../../nginx/www/js/settings.mjs";

const LONG = "x".repeat(10240);
const HOSTILE = [
  "__proto__", "constructor", "toString", "hasOwnProperty", LONG, "\u202e\u0000\u001b\u2066", "", null, true, 0, -1,
  1.5, 1e300, Number.MAX_SAFE_INTEGER, [], [1, "a"], {}, JSON.parse('{"__proto__":{"polluted":1},"constructor":{}}'),
];
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
  assert.equal(inbox.markRead("KJ7ABC-7"), 300, "the upTo of /v1/read");
  assert.equal(inbox.markRead("KJ7ABC-7"), 0);
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

test("inbox: the cursor only moves forward; read markers from other devices and for all", () => {
  const inbox = new Inbox();
  inbox.advance(500);
  inbox.advance(400);
  inbox.advance("600");
  assert.equal(inbox.cursor, 500);
  inbox.merge([
    received("KJ7ABC-7", "one", 100, "1"),
    received("KJ7ABC-7", "two", 200, "2"),
    received("W5AGO", "three", 300, "3"),
    sent("KJ7ABC-7", "four", 400, "X", "pending", "c"),
  ]);
  assert.equal(inbox.applyRead({ "KJ7ABC-7": 100 }), true);
  assert.equal(inbox.unread("KJ7ABC-7"), 1);
  assert.equal(inbox.applyRead({ "KJ7ABC-7": 50 }), false, "a marker never moves back");
  assert.equal(inbox.applyRead({ "*": 300 }), true);
  assert.equal(inbox.totalUnread(), 0);
  inbox.merge([received("W5AGO", "five", 500, "4")]);
  assert.equal(inbox.unread("W5AGO"), 1);
  assert.equal(inbox.markAllRead(), 500);
  assert.equal(inbox.markAllRead(), 0);
  for (const value of [null, [], "x", { "KJ7ABC-7": "9" }, { "*": -1 }]) assert.equal(inbox.applyRead(value), false);
  // Another SSID's entries carry their addressee.
  inbox.merge([{ ...received("KJ7XYZ", "to nine", 600, "5"), to: "n0call-9" }]);
  assert.equal(inbox.conversation("KJ7XYZ")[0].to, "N0CALL-9");
});

test("catches: subscription entries apart from messages, newest first, by subscription", () => {
  const inbox = new Inbox();
  const catches = new Catches();
  const answer = [
    { direction: "received", type: "bulletin", peer: "WX1ABC", text: "Storm", timestamp: 10, seqId: null, to: "BLN1WX", subscription: "s1" },
    { direction: "received", type: "watch", peer: "K1ABC", text: "heard", timestamp: 20, seqId: null, subscription: "s2",
      event: "heard", latitude: 41.1, longitude: -81.5 },
    received("KJ7ABC", "a message", 30),
    { direction: "received", type: "weird", peer: "X", text: "y", timestamp: 40 },
  ];
  assert.equal(catches.merge(answer), 2);
  assert.equal(catches.merge(answer), 0);
  inbox.merge(answer);
  assert.deepEqual(inbox.conversations().map((conversation) => conversation.peer), ["KJ7ABC"]);
  assert.deepEqual(catches.list().map((entry) => entry.peer), ["K1ABC", "WX1ABC"]);
  assert.deepEqual(catches.list("s1").map((entry) => entry.to), ["BLN1WX"]);
  assert.equal(catches.list("s2")[0].event, "heard");
  for (const value of HOSTILE) assert.doesNotThrow(() => catches.merge([value, { ...answer[0], timestamp: value, text: value }]));
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
  // A 4xx without `error` is a success (docs/protocol.md, "Errors").
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
  assert.deepEqual(plain(open.posted), [{ url: "https://aprs.example.org/", message: { type: "open", peer: "W5AGO", view: null } }]);
  assert.deepEqual(closed, ["KJ7ABC-7", "W5AGO"]);
});

test("service worker: a subscription's push opens the subscriptions, not a conversation", async () => {
  const rig = await serviceWorker();
  await rig.dispatch("push", pushEvent('{"fromCall":"WX1ABC","to":"KJ7ABC","type":"bulletin","subscription":"s1","title":"Bulletin"}'));
  assert.deepEqual(plain(rig.shown[0].options.data), { peer: "", url: "./#/subs" });
  const open = await serviceWorker({ windows: ["https://aprs.example.org/"] });
  await open.dispatch("notificationclick", { notification: { data: rig.shown[0].options.data, close: () => {} } });
  assert.deepEqual(plain(open.posted)[0].message, { type: "open", peer: "", view: "subs" });
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

// ---------------------------------------------------------------------------------------------------
// Languages: one table each, all complete; every key the page uses exists.

test("i18n: every language has every key of the English table, with the same placeholders, none empty", () => {
  const english = LANGUAGES.get("en").table;
  const placeholders = (text) => [...text.matchAll(/\{(\w+)\}/g)].map((match) => match[1]).sort();
  for (const [code, { table }] of LANGUAGES) {
    const missing = Object.keys(english).filter((key) => !Object.hasOwn(table, key));
    const extra = Object.keys(table).filter((key) => !Object.hasOwn(english, key));
    assert.deepEqual(missing, [], `${code} lacks keys`);
    assert.deepEqual(extra, [], `${code} has keys English lacks`);
    for (const [key, text] of Object.entries(table)) {
      assert.equal(typeof text, "string", `${code} ${key}`);
      assert.notEqual(text.trim(), "", `${code} ${key} is empty`);
      assert.deepEqual(placeholders(text), placeholders(english[key]), `${code} ${key} placeholders`);
    }
  }
});

test("i18n: every key the page's files use is in the English table", async () => {
  const { readFile, readdir } = await import("node:fs/promises");
  const english = LANGUAGES.get("en").table;
  const root = new URL("../../nginx/www/", import.meta.url);
  const modules = (await readdir(new URL("js/", root), { recursive: true })).filter((name) => name.endsWith(".mjs"));
  const files = ["index.html", ...modules.map((name) => `js/${name}`)];
  const used = new Set();
  for (const file of files) {
    const source = await readFile(new URL(file, root), "utf8");
    for (const match of source.matchAll(/\btn?\("([^"]+)"/g)) used.add(match[1]);
    for (const match of source.matchAll(/data-i18n="([^"]+)"/g)) used.add(match[1]);
    for (const match of source.matchAll(/data-i18n-attr="([^"]+)"/g)) {
      for (const pair of match[1].split(",")) if (pair.includes(":")) used.add(pair.split(":")[1]);
    }
  }
  // Keys made from data (`t(\`state.${state}\`)` and the like), each value the code can give.
  const families = {
    "state.": ["pending", "acked", "rejected", "expired", "cancelled"],
    "claim.": ["mine", "other", "unclaimed"],
    "settings.locked.": ["other", "unclaimed", "none"],
    "subs.kind.": ["bulletin", "group", "nws", "watch"],
    "subs.event.": ["heard", "silent", "emergency"],
    "forward.status.": ["active", "unconfirmed", "disabled", "unknown"],
    "forward.": ["email", "ntfy", "webhook"],
    "forward.target.": ["email", "ntfy", "webhook"],
  };
  for (const [prefix, values] of Object.entries(families)) for (const value of values) used.add(prefix + value);
  const plural = (key) => Object.hasOwn(english, `${key}.one`) && Object.hasOwn(english, `${key}.other`);
  const missing = [...used].filter((key) => !Object.hasOwn(english, key) && !plural(key));
  assert.deepEqual(missing, []);
  assert.ok(used.size > 150, `only ${used.size} keys found: the scan is broken`);
});

test("i18n: the language from the browser's list, German plurals and placeholders, English as the fallback", () => {
  assert.deepEqual(pickLanguage(["de-AT", "en-US"]), { language: "de", locale: "de-AT" });
  assert.deepEqual(pickLanguage(["fr-FR", "de"]), { language: "de", locale: "de" });
  assert.deepEqual(pickLanguage(["fr-FR"]), { language: "en", locale: "fr-FR" });
  assert.deepEqual(pickLanguage([]), { language: "en", locale: "en" });
  assert.deepEqual(pickLanguage(["not a tag!!", 5]), { language: "en", locale: "en" });
  setLanguage("de", "de-DE");
  try {
    assert.equal(t("signIn.button"), "Anmelden");
    assert.equal(tn("inbox.unread", 1), "ungelesene Nachricht");
    assert.equal(tn("rules.over", 1200, { max: 67 }), "1.200 Zeichen zu viel: Eine APRS-Nachricht fasst höchstens 67.");
    assert.equal(checkText("a{b").errors[0], "APRS erlaubt { in Nachrichten nicht; bitte entfernen.");
    assert.equal(stateWord("acked"), "zugestellt");
    assert.equal(t("no.such.key"), "no.such.key");
  } finally {
    setLanguage("en");
  }
  assert.equal(t("signIn.button"), "Sign in");
  setLanguage("xx");
  assert.equal(language(), "en");
});

// ---------------------------------------------------------------------------------------------------
// Settings: read defensively, typed values checked, presets, the zone, the key link.

test("settings: an answer read into plain values, hostile fields falling back to defaults", () => {
  const good = readSettings({
    blocked: ["KJ7ABC", "OH7AA-1"], mutedUntil: 5, quietHours: { start: 1320, end: 420, utcOffsetMinutes: 120 },
    quietBypass: [], ackPolicy: "device", keylessDevices: "deny", ssids: [0, 7, 9], ackSsids: [9],
    subscriptions: [{ kind: "bulletin", match: "BLN*", id: "s1" }, { kind: "watch", call: "K1ABC", silentFor: 7200, emergency: true, id: "s2" }],
    retention: { mode: "untilPulled", max: 200 },
    forward: [{ id: "f1", type: "webhook", url: "https://h.example.org/x", secretHint: "…Zk42", always: false, status: "disabled",
      reason: "410 gone", disabledAt: 7 }],
  });
  assert.deepEqual(good.blocked, ["KJ7ABC", "OH7AA-1"]);
  assert.deepEqual(good.quietHours, { start: 1320, end: 420, utcOffsetMinutes: 120 });
  assert.equal(good.ackPolicy, "device");
  assert.deepEqual(good.ssids, [0, 7, 9]);
  assert.deepEqual(good.subscriptions.map((subscription) => subscription.id), ["s1", "s2"]);
  assert.deepEqual(good.retention, { mode: "untilPulled", max: 200 });
  assert.deepEqual(good.forward[0], { id: "f1", type: "webhook", target: "https://h.example.org/x", hint: "…Zk42",
    always: false, status: "disabled", reason: "410 gone", disabledAt: 7 });
  const none = readSettings({});
  assert.equal(none.forward, null, "a server without forwarding");
  for (const value of HOSTILE) {
    const settings = readSettings(Object.fromEntries(
      ["blocked", "mutedUntil", "quietHours", "quietBypass", "ackPolicy", "keylessDevices", "ssids", "ackSsids",
        "subscriptions", "retention", "forward"].map((key) => [key, value])));
    assert.ok(["server", "device", "never"].includes(settings.ackPolicy));
    assert.ok(Array.isArray(settings.blocked) && Array.isArray(settings.subscriptions));
    assert.ok(settings.retention.mode === "ring");
  }
  for (const value of HOSTILE) assert.doesNotThrow(() => readSettings(value));
});

test("settings: calls, SSIDs, quiet hours and retention from the form, errors naming the field", () => {
  assert.deepEqual(parseCalls("kj7abc\n oh7aa-1, KJ7ABC  w5ago-0"), { calls: ["KJ7ABC", "OH7AA-1", "W5AGO"] });
  assert.match(parseCalls("KJ7ABC, not-a-call!").error, /“NOT-A-CALL!” is not a call/);
  assert.match(parseCalls("KJ7ABC-16").error, /not a call/);
  assert.deepEqual(parseSsids("9, 0 7 9"), { ssids: [0, 7, 9] });
  assert.match(parseSsids("16").error, /not an SSID/);
  const form = {
    blocked: "KJ7ABC", quietBypass: "", quietOn: true, quietStart: "22:00", quietEnd: "07:00", ackPolicy: "device",
    keylessDevices: "allow", ssidsMode: "list", ssidsText: "0, 9", ackSsidsText: "9", retentionMode: "untilPulled", retentionMax: "200",
  };
  assert.deepEqual(settingsRequest(form, 60).fields, {
    blocked: ["KJ7ABC"], quietBypass: [], quietHours: { start: 1320, end: 420, utcOffsetMinutes: 60 }, ackPolicy: "device",
    keylessDevices: "allow", ssids: [0, 9], ackSsids: [9], retention: { mode: "untilPulled", max: 200 },
  });
  assert.deepEqual(settingsRequest({ ...form, quietOn: false, ssidsMode: "all", retentionMode: "ring" }, 0).fields.quietHours, null);
  const bad = settingsRequest({ ...form, blocked: "?!", quietStart: "22:00", quietEnd: "22:00", ssidsText: "99", retentionMax: "0" }, 0);
  assert.deepEqual(Object.keys(bad.errors).sort(), ["blocked", "quiet", "retention", "ssids"]);
  assert.equal(minutesToTime(1320), "22:00");
  assert.equal(minutesToTime(5), "00:05");
  assert.equal(timeToMinutes("07:30"), 450);
  assert.equal(timeToMinutes("25:00"), null);
});

test("settings: mute presets, quiet hours following the browser's zone", () => {
  const now = Date.UTC(2026, 11, 2, 10, 0);
  assert.equal(muteUntil("1h", now), now + 3600000);
  assert.equal(muteUntil("8h", now), now + 8 * 3600000);
  assert.equal(muteUntil("1w", now), now + 7 * 86400000);
  assert.equal(muteUntil("off", now), 0);
  const morning = new Date(muteUntil("morning", now));
  assert.equal(morning.getHours(), 8);
  assert.ok(morning.getTime() > now && morning.getTime() - now < 2 * 86400000);
  const settings = { quietHours: { start: 1320, end: 420, utcOffsetMinutes: 120 } };
  assert.equal(quietOffsetUpdate(settings, 120), null);
  assert.deepEqual(quietOffsetUpdate(settings, 60), { quietHours: { start: 1320, end: 420, utcOffsetMinutes: 60 } });
  assert.equal(quietOffsetUpdate({ quietHours: null }, 60), null);
  assert.equal(browserOffset(new Date()), -new Date().getTimezoneOffset());
});

test("settings: subscriptions and forwarding targets from the form", () => {
  assert.deepEqual(subscriptionDraft({ kind: "bulletin", match: "bln?wx", bypass: true }).subscription,
    { kind: "bulletin", match: "BLN?WX", bypass: true });
  assert.deepEqual(subscriptionDraft({ kind: "nws", zones: "ohc081, PAZ125 ohc081" }).subscription,
    { kind: "nws", zones: ["OHC081", "PAZ125"] });
  assert.match(subscriptionDraft({ kind: "nws", zones: "OHIO" }).error, /OHIO/);
  assert.deepEqual(subscriptionDraft({ kind: "nws", zones: "nsw_fw001 TAS_MW002" }).subscription,
    { kind: "nws", zones: ["NSW_FW001", "TAS_MW002"] });
  assert.match(subscriptionDraft({ kind: "nws", zones: "XX_FW001" }).error, /XX_FW001/);
  assert.deepEqual(subscriptionDraft({ kind: "watch", call: "k1abc", heardHours: "1", silentHours: "", emergency: true }).subscription,
    { kind: "watch", call: "K1ABC", heardAfter: 3600, emergency: true });
  assert.match(subscriptionDraft({ kind: "watch", call: "K1ABC", heardHours: "0.01" }).error, /Hours/);
  assert.match(subscriptionDraft({ kind: "watch", call: "K1ABC" }).error, /at least one/);
  assert.deepEqual(subscriptionDraft({ kind: "group", call: "slcares" }).subscription, { kind: "group", call: "SLCARES" });
  assert.ok(subscriptionDraft({ kind: "__proto__" }).error);
  assert.deepEqual(forwardDraft({ type: "email", target: "me@example.org", always: true }).target,
    { type: "email", to: "me@example.org", always: true });
  assert.ok(forwardDraft({ type: "email", target: "not an address" }).error);
  assert.ok(forwardDraft({ type: "webhook", target: "http://h.example.org/", secret: "x".repeat(16) }).error, "https only");
  assert.ok(forwardDraft({ type: "webhook", target: "https://h.example.org/", secret: "short" }).error);
  assert.deepEqual(forwardDraft({ type: "ntfy", target: "https://ntfy.example.org/topic", secret: "" }).target,
    { type: "ntfy", url: "https://ntfy.example.org/topic", always: false });
  // The types offered are the server's (/v1/info `forward`), known ones only; none while forwarding is off.
  assert.deepEqual(forwardTypes({ forward: ["webhook", "ntfy"] }), ["ntfy", "webhook"]);
  assert.deepEqual(forwardTypes({ forward: ["email", "ntfy", "webhook"] }), ["email", "ntfy", "webhook"]);
  assert.deepEqual(forwardTypes({ features: ["claim"] }), []);
  for (const hostile of ["email", 7, { email: true }, ["__proto__", "constructor", "x".repeat(10_000)], null]) {
    assert.deepEqual(forwardTypes({ forward: hostile }), [], JSON.stringify(hostile));
  }
  assert.deepEqual(forwardTypes([]), []);
  assert.deepEqual(forwardTypes(null), ["email", "ntfy", "webhook"], "a server without /v1/info decides at save");
});

test("settings: the key link carries station and key in the fragment, and nothing else reads as one", () => {
  const key = "q3P" + "a".repeat(40);
  const link = keyLink("https://aprs.example.org/app/?x=1", "N0CALL-7", key);
  assert.equal(link, `https://aprs.example.org/app/?x=1#key=N0CALL-7:${key}`);
  assert.deepEqual(parseKeyLink(new URL(link).hash), { callsign: "N0CALL", ssid: 7, key });
  assert.deepEqual(parseKeyLink(`#key=N0CALL:${key}`), { callsign: "N0CALL", ssid: 0, key });
  for (const bad of ["", "#/c/N0CALL", `#key=N0CALL-16:${key}`, "#key=N0CALL-7:short", `#key=n0call:${key}`, `#key=N0CALL:${key}x!`]) {
    assert.equal(parseKeyLink(bad), null, bad);
  }
});

test("service worker: only the app shell is cached and answered; API calls and other paths are not touched", async () => {
  const { readFile } = await import("node:fs/promises");
  const vm = await import("node:vm");
  const source = await readFile(new URL("../../nginx/www/sw.js", import.meta.url), "utf8");
  const listeners = {};
  const put = [];
  const cache = { put: async (key) => put.push(key), add: async () => {} };
  const self = {
    addEventListener: (type, listener) => (listeners[type] = listener),
    registration: { scope: "https://aprs.example.org/app/" },
  };
  vm.runInNewContext(source, {
    self, URL, console,
    caches: { open: async () => cache, match: async () => undefined },
    fetch: async () => ({ ok: true, type: "basic", clone: () => ({}) }),
  });
  const fetchOf = async (url, method = "GET") => {
    let answered = null;
    listeners.fetch({ request: { url, method, mode: "no-cors" }, respondWith: (promise) => (answered = promise) });
    if (answered) await answered;
    await new Promise((resolve) => setTimeout(resolve, 0));
    return answered !== null;
  };
  assert.equal(await fetchOf("https://aprs.example.org/app/js/app.mjs?v=2"), true);
  assert.equal(await fetchOf("https://aprs.example.org/app/"), true);
  for (const url of [
    "https://aprs.example.org/app/v1/info", "https://aprs.example.org/app/v1/sync", "https://aprs.example.org/health",
    "https://aprs.example.org/app/export.json", "https://aprs.example.org/app/js/other.mjs", "https://elsewhere.example.org/app/app.css",
  ]) {
    assert.equal(await fetchOf(url), false, url);
  }
  assert.equal(await fetchOf("https://aprs.example.org/app/app.css", "POST"), false);
  assert.deepEqual(put, ["https://aprs.example.org/app/js/app.mjs", "https://aprs.example.org/app/"]);
});

test("service worker: its app shell lists every file the page loads", async () => {
  const { access, readFile, readdir } = await import("node:fs/promises");
  const source = await readFile(new URL("../../nginx/www/sw.js", import.meta.url), "utf8");
  const root = new URL("../../nginx/www/js/", import.meta.url);
  const modules = (await readdir(root, { recursive: true })).filter((name) => name.endsWith(".mjs")).map((name) => `js/${name}`);
  assert.ok(modules.includes("js/lang/en.mjs") && modules.includes("js/screens/inbox.mjs"), "the scan is broken");
  for (const file of [...modules, "index.html", "app.css"]) assert.ok(source.includes(`"${file}"`), file);
  // And nothing it lists is gone.
  const www = new URL("../", root);
  for (const [, file] of source.matchAll(/^ {2}"([^"]+)",$/gm)) {
    if (file !== "./") await access(new URL(file, www));
  }
});

test("screens: one file per screen, each one class with the interface of screens/screen.mjs; app.mjs stays small", async () => {
  const { readFile, readdir } = await import("node:fs/promises");
  const { Screen, SCREEN_INTERFACE } = await import("../../nginx/www/js/screens/screen.mjs");
  const root = new URL("../../nginx/www/js/", import.meta.url);
  const names = (await readdir(new URL("screens/", root))).filter((name) => name.endsWith(".mjs") && name !== "screen.mjs");
  assert.deepEqual(names.sort(), ["conversation.mjs", "inbox.mjs", "settings.mjs", "signin.mjs", "subscriptions.mjs", "topbar.mjs"]);
  const app = await readFile(new URL("app.mjs", root), "utf8");
  for (const name of names) {
    const module = await import(new URL(`screens/${name}`, root).href);
    const exported = Object.values(module);
    assert.equal(exported.length, 1, `${name} exports one thing`);
    const [screen] = exported;
    assert.ok(screen.prototype instanceof Screen, `${name}: ${screen.name} extends Screen`);
    assert.equal(screen.length, 1, `${name}: constructor(context)`);
    for (const member of SCREEN_INTERFACE) assert.equal(typeof screen.prototype[member], "function", `${name}: ${member}`);
    // A screen reaches the page only through its context, never back into app.mjs.
    const source = await readFile(new URL(`screens/${name}`, root), "utf8");
    assert.doesNotMatch(source, /from "\.\.\/app\.mjs"/, name);
    assert.match(app, new RegExp(`from "\\./screens/${name.replace(".", "\\.")}"`), `app.mjs uses ${name}`);
  }
  const lines = app.split("\n").length;
  assert.ok(lines < 350, `app.mjs has ${lines} lines: state, routing and boot only`);
});

test("audit trail: entries of the wrong shape or an unknown action are left out, text is cut", () => {
  const good = { at: 1796000000000, action: "settings", client: "2001:db8:1:2::/64", detail: "blocked, mutedUntil" };
  const entries = readAudit({
    entries: [
      good, null, "settings", 5, [], { ...good, at: "1" }, { ...good, at: 1.5 }, { ...good, action: "__proto__" },
      { ...good, action: "constructor" }, { ...good, client: 7 }, { ...good, detail: 7 }, { ...good, detail: LONG },
      JSON.parse('{"__proto__":{"polluted":true},"at":2,"action":"claimed","client":"operator"}'),
    ],
  });
  assert.deepEqual(entries.map((entry) => entry.at), [1796000000000, 1796000000000, 1796000000000, 2]);
  assert.equal(entries[1].detail, "", "a detail of the wrong type is none");
  assert.equal(entries[2].detail.length, 300);
  assert.deepEqual(entries[3], { at: 2, action: "claimed", client: "operator", detail: "" });
  assert.equal({}.polluted, undefined);
  for (const answer of [null, undefined, "x", { entries: "x" }, { entries: {} }]) assert.deepEqual(readAudit(answer), []);
});
