// Hostile answers for the web client (test_browser.py, the hostile-answer test). Runs before the page's own
// scripts. While `window.__hostile` is on, every /v1 answer the page receives is corrupted: the real answer
// (the request still reaches the server, so its state stays real) with each field in turn replaced by a
// hostile value, objects given `__proto__` and `constructor` keys of their own, and syncs answered at once
// with messages in which every field in turn holds every hostile value. After `window.__hostileRounds` syncs
// it switches itself off (`window.__hostileDone`), and the page must go on with the real server.
(() => {
  const realFetch = window.fetch.bind(window);
  const long = "x".repeat(10240);
  const VALUES = [
    "__proto__", "constructor", "toString", "hasOwnProperty", "prototype", long,
    "\u202e\u0000\u0007\u001b[31m\u2066evil\u200f\u061c", "<img src=x onerror=alert(1)>", "",
    null, true, false, 0, -1, 1.5, 1e300, 9007199254740991, -9007199254740991,
    [], [1, "a", null], {}, withOwn({ a: 1 }),
  ];
  window.__hostileValues = VALUES.length;
  window.__hostileSyncs = 0;
  window.__hostileRounds = window.__hostileRounds ?? 40;

  /** An object with `__proto__` and `constructor` as its own keys (as JSON.parse makes them). */
  function withOwn(object) {
    Object.defineProperty(object, "__proto__", { value: { polluted: true }, enumerable: true, writable: true, configurable: true });
    object.constructor = { prototype: { polluted: true } };
    return object;
  }

  function message(index) {
    return {
      direction: "received", type: "message", peer: "KJ7HOS-1", text: `hostile ${index}`,
      timestamp: 1000 + index, seqId: String(index % 90),
    };
  }

  const FIELDS = [
    "direction", "type", "peer", "text", "timestamp", "seqId", "state", "clientId", "to", "subscription",
    "event", "latitude", "longitude",
  ];

  /** Every message field in turn, with every hostile value in turn; then a few whole entries that are not objects. */
  function messages() {
    const list = [];
    let index = 0;
    for (const field of FIELDS) {
      for (const value of VALUES) {
        const entry = message(index++);
        entry[field] = value;
        list.push(entry);
      }
    }
    list.push(null, "a string", 42, [], withOwn({}));
    // The peers a plain object would stumble on, as ordinary messages.
    for (const peer of ["__PROTO__", "CONSTRUCTOR", "TOSTRING", "HASOWNPROPERTY"]) {
      list.push({ ...message(index++), peer, text: `from ${peer}` });
    }
    // Subscription entries (`want:["subscriptions"]`), every field in turn hostile too.
    const CATCH_FIELDS = ["type", "peer", "text", "timestamp", "to", "subscription", "event", "latitude", "longitude"];
    for (const type of ["bulletin", "group", "nws", "watch"]) {
      for (const field of CATCH_FIELDS) {
        for (const value of VALUES) {
          const entry = {
            direction: "received", type, peer: "WX1ABC", text: `caught ${index}`, timestamp: 1000 + index++,
            seqId: null, to: "BLN1WX", subscription: "s1", event: "heard", latitude: 41.1, longitude: -81.5,
          };
          entry[field] = value;
          list.push(entry);
        }
      }
    }
    // One whose rendering the test makes fail (its Date.prototype.toISOString throws for 1337).
    list.push({ ...message(0), timestamp: 1337, peer: "KJ7FAIL", text: "render me plainly" });
    return list;
  }

  function corrupt(answer, round) {
    if (!answer || typeof answer !== "object" || Array.isArray(answer)) return answer;
    const keys = Object.keys(answer).filter((key) => key !== "error");
    if (keys.length > 0) {
      const key = keys[round % keys.length];
      answer[key] = VALUES[Math.floor(round / keys.length) % VALUES.length];
    }
    return withOwn(answer);
  }

  let round = 0;
  function syncAnswer(body) {
    const syncs = window.__hostileSyncs++;
    const answer = {
      messages: syncs === 0 ? messages() : [{ ...message(500 + syncs), text: `round ${syncs}` }],
      serverTime: 2000 + syncs,
      avatars: withOwn({
        "KJ7HOS-1": "icon:constructor", CONSTRUCTOR: "icon:__proto__", __PROTO__: "icon:toString",
        TOSTRING: "ab".repeat(32), HASOWNPROPERTY: long,
      }),
      more: syncs % 7 === 3,
      dropped: syncs,
      oldestTimestamp: 1000,
      read: withOwn({ "KJ7HOS-1": 1001, CONSTRUCTOR: "x", __PROTO__: 1e300 }),
    };
    return corrupt(answer, round++);
  }

  window.fetch = async (input, init) => {
    const url = typeof input === "string" ? input : input.url;
    if (!window.__hostile || !url.includes("/v1/")) return realFetch(input, init);
    let body = null;
    try {
      body = init && init.body ? JSON.parse(init.body) : null;
    } catch (error) {}
    if (url.endsWith("/v1/sync")) {
      if (window.__hostileSyncs >= window.__hostileRounds) {
        window.__hostile = false;
        window.__hostileDone = true;
        return realFetch(input, init);
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
      return new Response(JSON.stringify(syncAnswer(body)), { status: 200, headers: { "content-type": "application/json" } });
    }
    const response = await realFetch(input, init);
    let answer;
    try {
      answer = await response.json();
    } catch (error) {
      return new Response("not json", { status: response.status });
    }
    if (answer && typeof answer === "object" && answer.error !== undefined) {
      return new Response(JSON.stringify(answer), { status: response.status, headers: { "content-type": "application/json" } });
    }
    if (url.endsWith("/v1/claim")) {
      // The claim stays whole (its key is checked by the unit tests): the owner's screens are what is tested here.
      return new Response(JSON.stringify(answer), { status: response.status, headers: { "content-type": "application/json" } });
    }
    if (url.endsWith("/v1/settings")) {
      // Every field hostile at once, and lists of hostile subscriptions and forwarding targets.
      const keys = Object.keys(answer);
      keys.forEach((key, index) => {
        answer[key] = VALUES[(round + index) % VALUES.length];
      });
      answer.subscriptions = [
        ...VALUES,
        ...["kind", "id", "match", "call", "zones", "heardAfter", "silentFor", "emergency", "bypass"].flatMap((field) =>
          VALUES.map((value) => ({ kind: "watch", id: "s1", call: "K1ABC", zones: ["OHC081"], match: "BLN*", [field]: value }))),
      ];
      answer.forward = [
        ...VALUES,
        ...["id", "type", "to", "url", "secretHint", "status", "reason", "disabledAt", "always"].flatMap((field) =>
          VALUES.map((value) => ({ id: "f1", type: "webhook", url: "https://h.example.org/", status: "disabled", [field]: value }))),
      ];
      round += 1;
      return new Response(JSON.stringify(withOwn(answer)), { status: 200, headers: { "content-type": "application/json" } });
    }
    if (url.endsWith("/v1/audit")) {
      // Entries that are not objects, and every field of an entry hostile in turn.
      answer.entries = [
        ...VALUES,
        ...["at", "action", "client", "detail"].flatMap((field) =>
          VALUES.map((value) => ({ at: 1, action: "settings", client: "127.0.0.1", detail: "blocked", [field]: value }))),
      ];
      return new Response(JSON.stringify(withOwn(answer)), { status: 200, headers: { "content-type": "application/json" } });
    }
    if (url.endsWith("/v1/avatars")) {
      answer.avatars = withOwn({
        constructor: { icon: "constructor", image: long, hash: "icon:constructor" },
        "KJ7HOS-1": { icon: "__proto__", image: "\u0000", hash: 5 },
        TOSTRING: "string",
      });
    }
    return new Response(JSON.stringify(corrupt(answer, round++)), {
      status: response.status, headers: { "content-type": "application/json" },
    });
  };
})();
