// The service worker: shows Web Push notifications (PROTOCOL.md, "Web Push and UnifiedPush"), opens the
// conversation when one is tapped, and keeps a copy of the page's files so that an installed app still
// opens without a network. It never touches the API: /v1 calls always go to the network.

"use strict";

const CACHE = "aprs-cloud-www-v1";
const FILES = [
  "./",
  "index.html",
  "app.css",
  "manifest.webmanifest",
  "js/app.mjs",
  "js/api.mjs",
  "js/avatars.mjs",
  "js/live.mjs",
  "js/model.mjs",
  "js/push.mjs",
  "js/rules.mjs",
  "icons/icon.svg",
  "icons/icon-192.png",
];

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
      for (const name of await caches.keys()) {
        if (name !== CACHE && name.startsWith("aprs-cloud-www-")) await caches.delete(name);
      }
      await self.clients.claim();
    })(),
  );
});

// The page's own files: the network first (so an upgrade shows at once), the copy when offline.
self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  const scope = new URL(self.registration.scope);
  if (request.method !== "GET" || url.origin !== scope.origin || !url.pathname.startsWith(scope.pathname)) return;
  if (url.pathname.startsWith(`${scope.pathname}v1/`) || url.pathname === "/health") return;
  event.respondWith(
    (async () => {
      try {
        const response = await fetch(request);
        if (response.ok && response.type === "basic") {
          const copy = response.clone();
          caches.open(CACHE).then((cache) => cache.put(request, copy)).catch(() => {});
        }
        return response;
      } catch (error) {
        const cached =
          (await caches.match(request, { ignoreSearch: true })) ??
          (request.mode === "navigate" ? await caches.match("./") : undefined);
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
    data: { peer, url: peer ? `./#/c/${encodeURIComponent(peer)}` : "./" },
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
        open.postMessage({ type: "open", peer: data.peer ?? "" });
        return;
      }
      await self.clients.openWindow(url);
    })(),
  );
});
