// Station settings as the page edits them (docs/protocol.md "Station settings", docs/api.md "Station settings"): the
// `/v1/settings` answer read defensively into plain values, what the user typed checked and turned into the
// request's fields, mute presets, quiet hours in the browser's zone, subscriptions, forwarding targets, and the
// link that carries a station key to another device. No DOM, no I/O: the Node tests import it as it is.

import { t } from "./i18n.mjs";

export const ACK_POLICIES = ["server", "device", "never"];
export const KEYLESS = ["allow", "deny"];
export const SUBSCRIPTION_KINDS = ["bulletin", "group", "nws", "watch"];
export const FORWARD_TYPES = ["email", "ntfy", "webhook"];
/** Calls a list (blocked, quietBypass) holds at most. */
export const MAX_CALLS = 100;
export const MAX_SUBSCRIPTIONS = 20;
export const MAX_FORWARD = 5;

const CALL = /^[A-Z0-9]{1,9}(?:-(?:[0-9]|1[0-5]))?$/;
// An NWS county or zone (OHC081), or a BOM area as WXSVR-AU names it (NSW_FW001): the server's canonical forms.
const ZONE = /^(?:[A-Z]{2}[CZ][0-9]{3}|(?:NSW|VIC|QLD|TAS|NT|WA|SA)_(?:CW|MW|PW|FW|ME)[0-9]{3})$/;
const ID = /^[A-Za-z0-9_-]{1,64}$/;

const isInt = (value) => Number.isSafeInteger(value);
const list = (value) => (Array.isArray(value) ? value : []);
const text = (value, max = 1024) => (typeof value === "string" ? value.slice(0, max) : null);

/** The settings answer as plain values; every field a default when the answer lacks it or it has the wrong type. */
export function readSettings(answer) {
  const value = answer && typeof answer === "object" && !Array.isArray(answer) ? answer : {};
  const quiet = value.quietHours;
  const quietHours =
    quiet && typeof quiet === "object" && isInt(quiet.start) && isInt(quiet.end) && isInt(quiet.utcOffsetMinutes)
      ? { start: quiet.start, end: quiet.end, utcOffsetMinutes: quiet.utcOffsetMinutes }
      : null;
  const retention =
    value.retention?.mode === "untilPulled" && isInt(value.retention.max) && value.retention.max > 0
      ? { mode: "untilPulled", max: value.retention.max }
      : { mode: "ring" };
  return {
    blocked: calls(value.blocked),
    mutedUntil: isInt(value.mutedUntil) && value.mutedUntil > 0 ? value.mutedUntil : 0,
    quietHours,
    quietBypass: calls(value.quietBypass),
    ackPolicy: ACK_POLICIES.includes(value.ackPolicy) ? value.ackPolicy : "never",
    keylessDevices: KEYLESS.includes(value.keylessDevices) ? value.keylessDevices : "allow",
    ssids: value.ssids === "all" ? "all" : Array.isArray(value.ssids) ? ssidList(value.ssids) : "exact",
    ackSsids: ssidList(value.ackSsids),
    subscriptions: list(value.subscriptions).map(readSubscription).filter(Boolean),
    retention,
    // Absent on a server without forwarding: null, and the page hides the screen.
    forward: Array.isArray(value.forward) ? value.forward.map(readTarget).filter(Boolean) : null,
  };
}

function calls(value) {
  return list(value).filter((call) => typeof call === "string" && CALL.test(call));
}

function ssidList(value) {
  return [...new Set(list(value).filter((ssid) => isInt(ssid) && ssid >= 0 && ssid <= 15))].sort((a, b) => a - b);
}

/** One subscription of an answer, or null. */
export function readSubscription(raw) {
  if (!raw || typeof raw !== "object" || !SUBSCRIPTION_KINDS.includes(raw.kind)) return null;
  const subscription = { kind: raw.kind, id: typeof raw.id === "string" && ID.test(raw.id) ? raw.id : null };
  if (raw.bypass === true) subscription.bypass = true;
  switch (raw.kind) {
    case "bulletin":
      if (typeof raw.match !== "string") return null;
      subscription.match = raw.match.slice(0, 16);
      break;
    case "group":
      if (typeof raw.call !== "string") return null;
      subscription.call = raw.call.slice(0, 16);
      break;
    case "nws":
      subscription.zones = list(raw.zones).filter((zone) => typeof zone === "string").map((zone) => zone.slice(0, 9));
      break;
    case "watch":
      if (typeof raw.call !== "string") return null;
      subscription.call = raw.call.slice(0, 16);
      for (const key of ["heardAfter", "silentFor"]) if (isInt(raw[key]) && raw[key] > 0) subscription[key] = raw[key];
      if (raw.emergency === true) subscription.emergency = true;
      break;
  }
  return subscription;
}

/** What `/v1/audit` records (the server's audit actions); an entry of another action is left out. */
export const AUDIT_ACTIONS = [
  "claimed",
  "rotated",
  "released",
  "lapsed",
  "settings",
  "unregistered",
  "ackPolicy",
  "proven",
  "replaced",
];

/**
 * The `/v1/audit` answer as plain entries `{at, action, client, detail}`, newest first as the server sent them;
 * an entry with a field of the wrong type or an unknown action is left out (never a prototype name used as a key).
 */
export function readAudit(answer) {
  return list(answer?.entries)
    .filter(
      (entry) =>
        entry &&
        typeof entry === "object" &&
        isInt(entry.at) &&
        AUDIT_ACTIONS.includes(entry.action) &&
        typeof entry.client === "string",
    )
    .slice(0, 100)
    .map((entry) => ({
      at: entry.at,
      action: entry.action,
      client: entry.client.slice(0, 64),
      detail: text(entry.detail, 300) ?? "",
    }));
}

/** One forwarding target of an answer (FORWARD-API: secrets only as hints), or null. */
export function readTarget(raw) {
  if (!raw || typeof raw !== "object" || !FORWARD_TYPES.includes(raw.type)) return null;
  if (typeof raw.id !== "string" || !ID.test(raw.id)) return null;
  const status = ["active", "unconfirmed", "disabled"].includes(raw.status) ? raw.status : "unknown";
  return {
    id: raw.id,
    type: raw.type,
    target: text(raw.type === "email" ? raw.to : raw.url, 1024) ?? "",
    hint: text(raw.secretHint ?? raw.tokenHint, 16),
    always: raw.always === true,
    status,
    reason: text(raw.reason, 300),
    disabledAt: isInt(raw.disabledAt) ? raw.disabledAt : null,
  };
}

/**
 * Calls typed one per line or separated by commas or spaces: `{calls}` upper case without repeats, or `{error}`
 * naming the first that is not a call (`KJ7ABC`, `KJ7ABC-7`).
 */
export function parseCalls(input) {
  const words = String(input ?? "")
    .toUpperCase()
    .split(/[\s,;]+/)
    .filter(Boolean);
  const result = [];
  for (const word of words) {
    const call = word.endsWith("-0") ? word.slice(0, -2) : word;
    if (!CALL.test(call)) return { error: t("calls.bad", { call: word.slice(0, 20) }) };
    if (!result.includes(call)) result.push(call);
  }
  if (result.length > MAX_CALLS) return { error: t("calls.tooMany", { max: MAX_CALLS }) };
  return { calls: result };
}

/** SSIDs typed as numbers separated by commas or spaces: `{ssids}` sorted without repeats, or `{error}`. */
export function parseSsids(input) {
  const words = String(input ?? "")
    .split(/[\s,;]+/)
    .filter(Boolean);
  const ssids = new Set();
  for (const word of words) {
    if (!/^\d{1,2}$/.test(word) || Number(word) > 15) return { error: t("ssids.bad", { ssid: word.slice(0, 10) }) };
    ssids.add(Number(word));
  }
  return { ssids: [...ssids].sort((a, b) => a - b) };
}

/** "HH:MM" for a minute of the day. */
export function minutesToTime(minutes) {
  const value = isInt(minutes) ? ((minutes % 1440) + 1440) % 1440 : 0;
  return `${String(Math.floor(value / 60)).padStart(2, "0")}:${String(value % 60).padStart(2, "0")}`;
}

/** The minute of the day of "HH:MM", or null. */
export function timeToMinutes(value) {
  const match = /^(\d{2}):(\d{2})$/.exec(String(value ?? ""));
  if (!match || Number(match[1]) > 23 || Number(match[2]) > 59) return null;
  return Number(match[1]) * 60 + Number(match[2]);
}

/** The browser's zone as the server counts it: local = UTC + offset, minutes (+120 is UTC+2). */
export function browserOffset(date = new Date()) {
  return -date.getTimezoneOffset();
}

/**
 * Quiet hours moved to the browser's zone: the `quietHours` field to send when the stored offset is not the
 * browser's (a trip, a change to or from summer time), else null.
 */
export function quietOffsetUpdate(settings, offset) {
  const quiet = settings?.quietHours;
  if (!quiet || quiet.utcOffsetMinutes === offset) return null;
  return { quietHours: { ...quiet, utcOffsetMinutes: offset } };
}

/** When a mute preset ends, epoch ms: "1h", "8h", "1w", "morning" (8:00 local time tomorrow), "off" (0). */
export function muteUntil(preset, now = Date.now()) {
  switch (preset) {
    case "1h":
      return now + 3600 * 1000;
    case "8h":
      return now + 8 * 3600 * 1000;
    case "1w":
      return now + 7 * 24 * 3600 * 1000;
    case "morning": {
      const date = new Date(now);
      date.setDate(date.getDate() + 1);
      date.setHours(8, 0, 0, 0);
      return date.getTime();
    }
    default:
      return 0;
  }
}

/**
 * The settings form's values (`{blocked, quietBypass, quietOn, quietStart, quietEnd, ackPolicy, keylessDevices,
 * ssidsMode, ssidsText, ackSsidsText, retentionMode, retentionMax}`, strings and booleans as the form holds them)
 * as the `/v1/settings` fields: `{fields}`, or `{errors}` keyed by the form field each is about.
 */
export function settingsRequest(form, offset) {
  const errors = {};
  const fields = {};
  const blocked = parseCalls(form.blocked);
  if (blocked.error) errors.blocked = blocked.error;
  else fields.blocked = blocked.calls;
  const bypass = parseCalls(form.quietBypass);
  if (bypass.error) errors.bypass = bypass.error;
  else fields.quietBypass = bypass.calls;
  if (form.quietOn) {
    const start = timeToMinutes(form.quietStart);
    const end = timeToMinutes(form.quietEnd);
    if (start === null || end === null || start === end) errors.quiet = t("quiet.bad");
    else fields.quietHours = { start, end, utcOffsetMinutes: offset };
  } else {
    fields.quietHours = null;
  }
  if (ACK_POLICIES.includes(form.ackPolicy)) fields.ackPolicy = form.ackPolicy;
  if (KEYLESS.includes(form.keylessDevices)) fields.keylessDevices = form.keylessDevices;
  if (form.ssidsMode === "all" || form.ssidsMode === "exact") {
    fields.ssids = form.ssidsMode;
  } else {
    const ssids = parseSsids(form.ssidsText);
    if (ssids.error) errors.ssids = ssids.error;
    else fields.ssids = ssids.ssids.length === 0 ? "exact" : ssids.ssids;
  }
  const ackSsids = parseSsids(form.ackSsidsText);
  if (ackSsids.error) errors.ackSsids = ackSsids.error;
  else fields.ackSsids = ackSsids.ssids;
  if (form.retentionMode === "untilPulled") {
    const max = Number(form.retentionMax);
    if (!Number.isSafeInteger(max) || max < 1) errors.retention = t("retention.bad");
    else fields.retention = { mode: "untilPulled", max };
  } else {
    fields.retention = { mode: "ring" };
  }
  return Object.keys(errors).length > 0 ? { errors } : { fields };
}

/**
 * A new subscription from the form (`{kind, match, call, zones, heardHours, silentHours, emergency, bypass}`):
 * `{subscription}` as the server takes it, or `{error}`.
 */
export function subscriptionDraft(form) {
  const bypass = form.bypass ? { bypass: true } : {};
  switch (form.kind) {
    case "bulletin": {
      const match = String(form.match ?? "").trim().toUpperCase();
      if (!/^BLN[A-Z0-9?*]{0,6}$/.test(match)) return { error: t("subs.bad.match") };
      return { subscription: { kind: "bulletin", match, ...bypass } };
    }
    case "group": {
      const call = String(form.call ?? "").trim().toUpperCase();
      if (!/^[A-Z0-9]{1,9}$/.test(call)) return { error: t("subs.bad.call") };
      return { subscription: { kind: "group", call, ...bypass } };
    }
    case "nws": {
      const zones = [...new Set(String(form.zones ?? "").toUpperCase().split(/[\s,;]+/).filter(Boolean))];
      const bad = zones.find((zone) => !ZONE.test(zone));
      if (zones.length === 0 || zones.length > 50 || bad) return { error: t("subs.bad.zones", { zone: bad ?? "" }) };
      return { subscription: { kind: "nws", zones, ...bypass } };
    }
    case "watch": {
      const call = String(form.call ?? "").trim().toUpperCase();
      if (!CALL.test(call)) return { error: t("subs.bad.watch") };
      const subscription = { kind: "watch", call, ...bypass };
      for (const [key, hours] of [["heardAfter", form.heardHours], ["silentFor", form.silentHours]]) {
        if (hours === "" || hours === undefined || hours === null) continue;
        const seconds = Math.round(Number(hours) * 3600);
        if (!Number.isFinite(seconds) || seconds < 300 || seconds > 30 * 24 * 3600) return { error: t("subs.bad.hours") };
        subscription[key] = seconds;
      }
      if (form.emergency) subscription.emergency = true;
      if (!subscription.heardAfter && !subscription.silentFor && !subscription.emergency) {
        return { error: t("subs.bad.watchNothing") };
      }
      return { subscription };
    }
    default:
      return { error: t("subs.bad.kind") };
  }
}

/** A subscription as the server takes it back (the `id` keeps it and its state). */
export function subscriptionBody(subscription) {
  const { id, ...rest } = subscription;
  return id ? { id, ...rest } : rest;
}

/**
 * The target types to offer, from the /v1/info answer (`info`; null: the server has no /v1/info, undefined: not
 * asked yet): its `forward` list, known types only, in FORWARD_TYPES order (`email` is there only when the server
 * has an SMTP server); none when the answer has no `forward` (forwarding is off there); all three without an answer.
 */
export function forwardTypes(info) {
  if (info === null || info === undefined) return [...FORWARD_TYPES];
  if (typeof info !== "object" || !Object.hasOwn(info, "forward")) return [];
  const listed = Array.isArray(info.forward) ? info.forward : [];
  return FORWARD_TYPES.filter((type) => listed.includes(type));
}

/** A new forwarding target from the form (`{type, target, secret, always}`): `{target}` or `{error}`. */
export function forwardDraft(form) {
  const always = form.always === true;
  const value = String(form.target ?? "").trim();
  switch (form.type) {
    case "email":
      if (value.length > 254 || !/^[^\s<>@]+@[^\s<>@]+\.[^\s<>@]+$/.test(value)) return { error: t("forward.bad.email") };
      return { target: { type: "email", to: value, always } };
    case "ntfy":
    case "webhook": {
      let url;
      try {
        url = new URL(value);
      } catch {
        url = null;
      }
      if (!url || url.protocol !== "https:" || value.length > 1024) return { error: t("forward.bad.url") };
      const secret = String(form.secret ?? "");
      if (form.type === "webhook" && (secret.length < 16 || secret.length > 256 || !/^[\x21-\x7e]+$/.test(secret))) {
        return { error: t("forward.bad.secret") };
      }
      if (form.type === "ntfy" && secret !== "" && (secret.length > 256 || !/^[\x21-\x7e]+$/.test(secret))) {
        return { error: t("forward.bad.token") };
      }
      const target = { type: form.type, url: value, always };
      if (form.type === "webhook") target.secret = secret;
      else if (secret !== "") target.token = secret;
      return { target };
    }
    default:
      return { error: t("forward.bad.type") };
  }
}

/** The link that carries a station key to another device: the page's address with `#key=<station>:<key>`. */
export function keyLink(pageHref, address, key) {
  const url = new URL(pageHref);
  url.hash = `key=${address}:${key}`;
  return url.href;
}

/** A key link's fragment (`#key=N0CALL-7:<key>`) as `{callsign, ssid, key}`, or null. */
export function parseKeyLink(hash) {
  const match = /^#key=([A-Z0-9]{1,9})(?:-(\d{1,2}))?:([A-Za-z0-9_-]{43,128})$/.exec(String(hash ?? ""));
  if (!match) return null;
  const ssid = match[2] === undefined ? 0 : Number(match[2]);
  if (ssid > 15) return null;
  return { callsign: match[1], ssid, key: match[3] };
}
