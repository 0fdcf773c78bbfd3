// Pure rules of the wire contract (docs/protocol.md) that the page checks before it asks the server: what a
// callsign, a station address and a message text may be, and the words it shows for a sent message's
// state. No DOM, no I/O: the Node tests import this module as it is. Sentences come from the string tables.

import { t, tn } from "./i18n.mjs";

/** Most characters in one APRS message text (docs/protocol.md, "Sending messages"). */
export const MAX_TEXT = 67;

/** Characters APRS reserves in a message text: `{` starts the message number, `|` and `~` are taken. */
export const FORBIDDEN = ["{", "|", "~"];

/**
 * What the user typed as callsign and SSID, as the API wants them: `{callsign, ssid}` upper case, or
 * `{error}` with a sentence. `N0CALL-7` in the callsign field means SSID 7 (the SSID field is then
 * ignored), as the server reads it too.
 */
export function parseIdentity(callsignText, ssidText) {
  let callsign = String(callsignText ?? "").trim().toUpperCase();
  let ssid = Number.parseInt(String(ssidText ?? "0"), 10);
  const dash = callsign.indexOf("-");
  if (dash >= 0) {
    const suffix = callsign.slice(dash + 1);
    callsign = callsign.slice(0, dash);
    if (!/^\d{1,2}$/.test(suffix)) {
      return { error: t("rules.ssidSuffix", { suffix }) };
    }
    ssid = Number.parseInt(suffix, 10);
  }
  if (callsign === "") return { error: t("rules.enterCall") };
  if (!/^[A-Z0-9]{1,9}$/.test(callsign)) {
    return { error: t("rules.callChars") };
  }
  if (!Number.isInteger(ssid) || ssid < 0 || ssid > 15) {
    return { error: t("rules.ssidRange") };
  }
  const address = ssid === 0 ? callsign : `${callsign}-${ssid}`;
  if (address.length > 9) {
    return { error: t("rules.tooLong", { address }) };
  }
  return { callsign, ssid, address };
}

/** The passcode field: digits only (the server compares it with the callsign's APRS-IS passcode). */
export function parsePasscode(text) {
  const passcode = String(text ?? "").trim();
  if (passcode === "") return { error: t("rules.enterPasscode") };
  if (!/^\d{1,5}$/.test(passcode)) return { error: t("rules.passcodeDigits") };
  return { passcode };
}

/**
 * A station address typed in the "To" field: `{address}` upper case (an SSID of 0 dropped), or
 * `{error}`. APRS addresses a message to at most 9 characters: the call, then `-SSID`.
 */
export function parseStation(text) {
  const value = String(text ?? "").trim().toUpperCase();
  if (value === "") return { error: t("rules.enterTo") };
  const match = /^([A-Z0-9]{1,9})(?:-([A-Z0-9]{1,2}))?$/.exec(value);
  if (!match) {
    return { error: t("rules.toChars") };
  }
  const address = match[2] === "0" ? match[1] : value;
  if (address.length > 9) return { error: t("rules.tooLong", { address }) };
  return { address };
}

/**
 * Checks a message text before sending. Returns `{count, errors, notes}`: `count` in characters (code
 * points, as people count them), `errors` (sentences; the text cannot be sent while there are any),
 * `notes` (sentences that do not stop a send). An empty text has no errors here: the form says so
 * only when the user tries to send it.
 */
export function checkText(text) {
  const characters = [...String(text ?? "")];
  const count = characters.length;
  const errors = [];
  const notes = [];
  if (count > MAX_TEXT) {
    const over = count - MAX_TEXT;
    errors.push(tn("rules.over", over, { max: MAX_TEXT }));
  }
  const forbidden = FORBIDDEN.filter((character) => characters.includes(character));
  if (forbidden.length > 0) {
    errors.push(tn("rules.forbidden", forbidden.length, { characters: forbidden.join(" ") }));
  }
  if (characters.some((character) => isControl(character))) {
    errors.push(t("rules.control"));
  }
  if (characters.some((character) => character.codePointAt(0) > 0x7e)) {
    notes.push(t("rules.ascii"));
  }
  return { count, errors, notes };
}

function isControl(character) {
  const code = character.codePointAt(0);
  return code < 0x20 || code === 0x7f || (code >= 0x80 && code < 0xa0);
}

/**
 * Whether `value` can be a station key (docs/protocol.md "Owned stations": base64url of at least 256 random bits).
 * Checked before it goes into a header: a value with a control character would make every call fail.
 */
export function isStationKey(value) {
  return typeof value === "string" && /^[A-Za-z0-9_-]{43,128}$/.test(value);
}

/** The word shown for a sent message's `state` (docs/protocol.md), or null for one without a state. */
export function stateWord(state) {
  return ["pending", "acked", "rejected", "expired", "cancelled"].includes(state) ? t(`state.${state}`) : null;
}

/** Two characters for an avatar without an image: the start of the base call (`KJ7ABC-7` → `KJ`). */
export function initials(address) {
  const base = String(address ?? "").split("-")[0].toUpperCase();
  return base.slice(0, 2) || "?";
}

/** A stable hue (0–359) for a station, so its initials keep one colour everywhere. */
export function hue(address) {
  let hash = 2166136261;
  for (const character of String(address ?? "")) {
    hash ^= character.codePointAt(0);
    hash = Math.imul(hash, 16777619) >>> 0;
  }
  return hash % 360;
}

/** A URL-safe base64 string (what VAPID keys are) as bytes, for `applicationServerKey`. */
export function base64UrlToBytes(text) {
  const base64 = String(text).replace(/-/g, "+").replace(/_/g, "/");
  const padded = base64 + "=".repeat((4 - (base64.length % 4)) % 4);
  const binary = atob(padded);
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index += 1) bytes[index] = binary.charCodeAt(index);
  return bytes;
}

/** Bytes as unpadded URL-safe base64 (to compare a subscription's key with the server's). */
export function bytesToBase64Url(buffer) {
  const bytes = buffer instanceof Uint8Array ? buffer : new Uint8Array(buffer);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
