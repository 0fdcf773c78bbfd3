// Web Push for the page (docs/protocol.md, "Web Push and UnifiedPush"): whether this browser and this server
// can do it, subscribing with the server's VAPID key, and the fields that register the subscription
// (`platform:"webpush"`, the endpoint as `pushToken`, its keys as `pushKeys`). The service worker
// (sw.js) shows what arrives. No UI here.

import { t } from "./i18n.mjs";
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
    return { ok: false, reason: t("push.noInfo") };
  }
  const features = Array.isArray(info.features) ? info.features : [];
  if (!features.includes("webpush") || typeof info.vapidPublicKey !== "string" || !info.vapidPublicKey) {
    return { ok: false, reason: t("push.noWebPush") };
  }
  if (globalThis.isSecureContext === false) {
    return { ok: false, reason: t("push.https") };
  }
  const hasWorker = "serviceWorker" in (globalThis.navigator ?? {});
  const hasPush = "PushManager" in globalThis && "Notification" in globalThis;
  if (!hasWorker || !hasPush) {
    if (isAppleMobile() && !isStandalone()) {
      return { ok: false, reason: t("push.homeScreen") };
    }
    return { ok: false, reason: t("push.unsupported") };
  }
  if (globalThis.Notification.permission === "denied") {
    return { ok: false, reason: t("push.blockedReload") };
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
    throw new Error(permission === "denied" ? t("push.blocked") : t("push.notAllowed"));
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
      throw new Error(t("push.subscribeFailed", { reason: error?.message ?? error }));
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
