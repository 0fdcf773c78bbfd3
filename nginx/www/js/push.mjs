// Web Push for the page (PROTOCOL.md, "Web Push and UnifiedPush"): whether this browser and this server
// can do it, subscribing with the server's VAPID key, and the fields that register the subscription
// (`platform:"webpush"`, the endpoint as `pushToken`, its keys as `pushKeys`). The service worker
// (sw.js) shows what arrives. No UI here.

import { base64UrlToBytes, bytesToBase64Url } from "./rules.mjs";

/** Whether the page runs as an installed app (a home-screen icon), where iOS allows Web Push. */
export function isStandalone() {
  return (
    globalThis.navigator?.standalone === true ||
    globalThis.matchMedia?.("(display-mode: standalone)").matches === true
  );
}

/** iPhone and iPad (an iPad says it is a Mac, but has touch). */
export function isAppleMobile() {
  const agent = globalThis.navigator?.userAgent ?? "";
  return /iPhone|iPad|iPod/.test(agent) || (/Macintosh/.test(agent) && navigator.maxTouchPoints > 1);
}

/**
 * Whether notifications can be switched on here: `{ok: true, key}` with the server's VAPID key, or
 * `{ok: false, reason}` with a sentence for the user. `info` is `/v1/info`'s answer, or null when the
 * server has no such endpoint.
 */
export function pushSupport(info) {
  if (!info) {
    return {
      ok: false,
      reason:
        "This server does not offer notifications (it has no /v1/info, so no Web Push). " +
        "New messages still appear here while this page is open.",
    };
  }
  const features = Array.isArray(info.features) ? info.features : [];
  if (!features.includes("webpush") || typeof info.vapidPublicKey !== "string" || !info.vapidPublicKey) {
    return {
      ok: false,
      reason:
        "This server does not send Web Push notifications. New messages still appear here while this page is open.",
    };
  }
  if (globalThis.isSecureContext === false) {
    return { ok: false, reason: "Notifications need this page over HTTPS (https:// in the address)." };
  }
  const hasWorker = "serviceWorker" in (globalThis.navigator ?? {});
  const hasPush = "PushManager" in globalThis && "Notification" in globalThis;
  if (!hasWorker || !hasPush) {
    if (isAppleMobile() && !isStandalone()) {
      return {
        ok: false,
        reason:
          "On iPhone and iPad, notifications work only from the Home Screen: tap Share, then " +
          "“Add to Home Screen”, and open APRS messages from there.",
      };
    }
    return { ok: false, reason: "This browser cannot receive Web Push notifications." };
  }
  if (globalThis.Notification.permission === "denied") {
    return {
      ok: false,
      reason: "Notifications are blocked for this site. Allow them in the browser's site settings, then reload.",
    };
  }
  return { ok: true, key: info.vapidPublicKey };
}

/** The subscription this browser holds for this site, if any. */
export async function currentSubscription() {
  if (!("serviceWorker" in navigator)) return null;
  const registration = await navigator.serviceWorker.getRegistration();
  if (!registration || !registration.pushManager) return null;
  return registration.pushManager.getSubscription();
}

/** Whether `subscription` was made with the VAPID key `key` (a server with a new key needs a new one). */
export function madeWithKey(subscription, key) {
  const used = subscription?.options?.applicationServerKey;
  if (!used) return true;
  return bytesToBase64Url(used) === key.replace(/=+$/, "");
}

/**
 * Asks for permission and subscribes with the server's VAPID key (an older subscription made with
 * another key is dropped first). Throws an Error with a sentence for the user.
 */
export async function subscribe(key) {
  const permission = await Notification.requestPermission();
  if (permission !== "granted") {
    throw new Error(
      permission === "denied"
        ? "Notifications are blocked for this site. Allow them in the browser's site settings."
        : "Notifications were not allowed.",
    );
  }
  const registration = await navigator.serviceWorker.ready;
  let subscription = await registration.pushManager.getSubscription();
  if (subscription && !madeWithKey(subscription, key)) {
    await subscription.unsubscribe();
    subscription = null;
  }
  if (!subscription) {
    try {
      subscription = await registration.pushManager.subscribe({
        userVisibleOnly: true,
        applicationServerKey: base64UrlToBytes(key),
      });
    } catch (error) {
      throw new Error(`The browser could not subscribe to push messages: ${error?.message ?? error}`);
    }
  }
  return subscription;
}

/** The register/heartbeat fields for `subscription` (exactly what `toJSON()` gives as endpoint and keys). */
export function deviceFields(subscription) {
  const json = subscription.toJSON();
  return {
    platform: "webpush",
    pushToken: json.endpoint,
    pushKeys: { p256dh: json.keys?.p256dh, auth: json.keys?.auth },
  };
}
