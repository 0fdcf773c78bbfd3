// Notifications for the signed-in station: the browser's push subscription registered with the server as a
// `platform:"webpush"` device and dropped again, and the service worker (sw.js) that shows each push, keeps the
// app shell for offline use and tells the page what was tapped. The browser side of Web Push is in push.mjs.

import { currentSubscription, deviceFields, madeWithKey, pushSupport, subscribe } from "./push.mjs";

/** The push fields for register when this browser already holds a subscription made with the server's key. */
export async function pushFieldsIfSubscribed(info) {
  const support = pushSupport(info);
  if (!support.ok) return {};
  try {
    const subscription = await currentSubscription();
    if (subscription && madeWithKey(subscription, support.key)) return deviceFields(subscription);
  } catch {
    // No subscription to carry.
  }
  return {};
}

/** Subscribes this browser and registers it for the signed-in station; throws an Error with a sentence. */
export async function enableNotifications(context) {
  const { state } = context;
  const support = pushSupport(state.info);
  if (!support.ok || !state.session) return;
  const subscription = await subscribe(support.key);
  await context.call("register", {
    ackMessages: false,
    wantHistory: false,
    since: state.inbox.cursor,
    ...deviceFields(subscription),
  });
  state.pushOn = true;
  context.render();
}

/** Drops this browser's device on the server, then its subscription; throws when the server refused. */
export async function disableNotifications(context) {
  const subscription = await currentSubscription();
  if (subscription) {
    await context.call("unregister", { pushToken: subscription.endpoint });
    await subscription.unsubscribe();
  }
  context.state.pushOn = false;
  context.render();
}

/** At sign-out: the same, best effort (the station is gone from this page either way). */
export async function dropPush(context, session) {
  try {
    const subscription = await currentSubscription();
    if (subscription) {
      await context.api
        .call("unregister", { ...context.identity(session), pushToken: subscription.endpoint })
        .catch(() => {});
      await subscription.unsubscribe();
    }
  } catch {
    // Best effort.
  }
}

const workerPolicy = globalThis.trustedTypes?.createPolicy("aprs-cloud", {
  createScriptURL(url) {
    const wanted = new URL("sw.js", document.baseURI).href;
    if (url !== wanted) throw new TypeError(`not the service worker: ${url}`);
    return url;
  },
});

/**
 * Registers the service worker and follows what it says: a tapped notification opens its conversation (or the
 * subscriptions), a push starts a sync at once (`kick`).
 */
export async function registerWorker({ kick }) {
  if (!("serviceWorker" in navigator)) return;
  const url = new URL("sw.js", document.baseURI).href;
  try {
    await navigator.serviceWorker.register(workerPolicy ? workerPolicy.createScriptURL(url) : url, {
      scope: "./",
    });
  } catch (error) {
    console.warn("service worker not registered:", error);
  }
  navigator.serviceWorker.addEventListener("message", (event) => {
    const data = event.data ?? {};
    if (data.type === "open" && data.view === "subs") {
      location.hash = "#/subs";
    } else if (data.type === "open" && typeof data.peer === "string" && data.peer !== "") {
      location.hash = `#/c/${encodeURIComponent(data.peer)}`;
    }
    if (data.type === "push") kick();
  });
}
