// The service worker: shows Web Push notifications (docs/protocol.md, "Web Push and UnifiedPush"), opens the
// conversation when one is tapped, and keeps a copy of the app shell (the page's own files, listed below) so
// that an installed app still opens without a network. Only those files: nothing else is answered from or
// put into its cache, never an API answer, so no message is ever kept in the browser's storage by it.

"use strict";

const CACHE = "aprs-cloud-www-v3";
/** The app shell, relative to the worker's scope. */
const FILES = [
  "./",
  "index.html",
  "app.css",
  "manifest.webmanifest",
  "js/app.mjs",
  "js/api.mjs",
  "js/avatars.mjs",
  "js/dom.mjs",
  "js/i18n.mjs",
  "js/lang/de.mjs",
  "js/lang/en.mjs",
  "js/live.mjs",
  "js/model.mjs",
  "js/notifications.mjs",
  "js/push.mjs",
  "js/rules.mjs",
  "js/sending.mjs",
  "js/session.mjs",
  "js/settings.mjs",
  "js/station.mjs",
  "js/sync.mjs",
  "js/screens/conversation.mjs",
  "js/screens/inbox.mjs",
  "js/screens/screen.mjs",
  "js/screens/settings.mjs",
  "js/screens/signin.mjs",
  "js/screens/subscriptions.mjs",
  "js/screens/topbar.mjs",
  "icons/icon.svg",
  "icons/icon-192.png",
];

/** The shell's URLs (absolute, without query or fragment). */
function shell() {
  return new Set(FILES.map((file) => new URL(file, self.registration.scope).href));
}

/** The shell file a GET of `url` is, or null: nothing else is the worker's business. */
function shellFile(url) {
  const bare = new URL(url);
  bare.search = "";
  bare.hash = "";
  return shell().has(bare.href) ? bare.href : null;
}

self.addEventListener("install", (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      // One file that cannot be fetched must not stop the worker: notifications matter more.
      await Promise.all(FILES.map((file) => cache.add(file).catch(() => {})));
      await self.skipWaiting();
    })(),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    (async () => {
      // Older versions cached every same-origin GET: their caches go whole.
      for (const name of await caches.keys()) {
        if (name !== CACHE && name.startsWith("aprs-cloud-www-")) await caches.delete(name);
      }
      await self.clients.claim();
    })(),
  );
});

// The app shell: the network first (so an upgrade shows at once), the copy when offline. Every other request
// (the API, anything else) is not touched.
self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const file = shellFile(request.url);
  if (!file) return;
  event.respondWith(
    (async () => {
      try {
        const response = await fetch(request);
        if (response.ok && response.type === "basic") {
          const copy = response.clone();
          caches.open(CACHE).then((cache) => cache.put(file, copy)).catch(() => {});
        }
        return response;
      } catch (error) {
        const cached = (await caches.match(file)) ?? (request.mode === "navigate" ? await caches.match("./") : undefined);
        if (cached) return cached;
        throw error;
      }
    })(),
  );
});

/** What a push carries (the FCM data keys plus title and body), read defensively. */
function readPush(event) {
  if (!event.data) return {};
  try {
    const value = event.data.json();
    return value && typeof value === "object" ? value : {};
  } catch {
    return { body: event.data.text() };
  }
}

self.addEventListener("push", (event) => {
  const data = readPush(event);
  const failed = data.kind === "sendFailed";
  const caught = ["bulletin", "group", "nws", "watch"].includes(data.type);
  const peer = typeof (failed ? data.to : data.fromCall) === "string" ? (failed ? data.to : data.fromCall) : "";
  const title =
    typeof data.title === "string" && data.title
      ? data.title
      : failed
        ? `Message to ${peer} not delivered`
        : peer
          ? `Message from ${peer}`
          : "New APRS message";
  const station = typeof data.to === "string" ? data.to : "station";
  const options = {
    body: typeof data.body === "string" ? data.body : "",
    // One banner per station, replaced by the next push (as the FCM and APNs collapse ids do).
    tag: failed ? `aprs-cloud-failed-${peer}-${data.seqId ?? ""}` : `aprs-cloud-${station}`,
    renotify: true,
    icon: "icons/icon-192.png",
    badge: "icons/badge-96.png",
    timestamp: Date.now(),
    // A subscription's entry (a bulletin, a watched station) opens the subscriptions, a message its conversation.
    data: {
      peer: caught ? "" : peer,
      url: caught ? "./#/subs" : peer ? `./#/c/${encodeURIComponent(peer)}` : "./",
    },
  };
  event.waitUntil(
    Promise.all([
      self.registration.showNotification(title, options),
      // An open page syncs at once instead of waiting for its next poll.
      self.clients
        .matchAll({ type: "window" })
        .then((windows) => windows.forEach((client) => client.postMessage({ type: "push" }))),
    ]),
  );
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const data = event.notification.data ?? {};
  const url = new URL(data.url ?? "./", self.registration.scope).href;
  event.waitUntil(
    (async () => {
      const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
      const open = windows.find((client) => client.url.startsWith(self.registration.scope));
      if (open) {
        try {
          await open.focus();
        } catch {
          // Focus may be refused; the page still switches to the conversation.
        }
        open.postMessage({ type: "open", peer: data.peer ?? "", view: data.url === "./#/subs" ? "subs" : null });
        return;
      }
      await self.clients.openWindow(url);
    })(),
  );
});
