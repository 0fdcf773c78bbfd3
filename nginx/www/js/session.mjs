// Signing in and out, the station's claim (docs/protocol.md "Owned stations") and what "remember me" keeps: the
// station and its key, nothing else; the passcode only while this browser holds no key (a station claimed by
// another device, or a server without claims). Never a message: a reload fetches the history again.

import { APIError } from "./api.mjs";
import { t } from "./i18n.mjs";
import { Catches, Inbox } from "./model.mjs";
import { pushFieldsIfSubscribed, dropPush } from "./notifications.mjs";
import { isStationKey, parseIdentity } from "./rules.mjs";
import { loadSendSupport } from "./sending.mjs";
import { loadSettings } from "./station.mjs";
import { WANT, startLive, stopLive } from "./sync.mjs";

const STORE_SESSION = "aprs-cloud.session";

function readJSON(key) {
  try {
    const text = localStorage.getItem(key);
    return text ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}

function writeJSON(key, value) {
  try {
    localStorage.setItem(key, JSON.stringify(value));
  } catch {
    // Storage full or disabled: the page works on without remembering.
  }
}

/** Removes everything the page keeps about a station (the language stays: it is not about the station). */
export function forgetEverything() {
  try {
    for (const key of Object.keys(localStorage)) {
      if (key.startsWith("aprs-cloud.")) localStorage.removeItem(key);
    }
  } catch {
    // Nothing stored.
  }
}

/** Removes an inbox an older version of this page kept in the browser's storage: messages are never kept there. */
export function forgetOldInboxes() {
  try {
    for (const key of Object.keys(localStorage)) if (key.startsWith("aprs-cloud.inbox.")) localStorage.removeItem(key);
  } catch {
    // No storage.
  }
}

/** The station "remember me" kept, as signIn takes it (`remember: true`), or null. */
export function remembered() {
  const saved = readJSON(STORE_SESSION);
  const station = saved ? parseIdentity(saved.callsign, saved.ssid) : null;
  const auth = typeof saved?.auth === "string" ? saved.auth : undefined;
  const stationKey = isStationKey(saved?.stationKey) ? saved.stationKey : null;
  if (!station?.callsign || !(auth || stationKey)) return null;
  return { callsign: station.callsign, ssid: station.ssid, auth, stationKey, remember: true };
}

/**
 * Signs in with the passcode (`auth`) or the station key of a claimed station (`stationKey`), or both. An
 * unclaimed station is claimed here: this browser then holds its key, which "remember" keeps instead of the
 * passcode. A station claimed by another device still signs in with the passcode, to read; sending and settings
 * need its key. A failure shows the sign-in screen with the reason, except for a remembered station opened
 * offline (`automatic`), which shows what it has while the live loop keeps trying. True when signed in.
 */
export async function signIn(context, { callsign, ssid, auth, stationKey, remember }, { automatic = false } = {}) {
  const { state, api } = context;
  context.showStatus({ mode: "signingIn" });
  const address = ssid === 0 ? callsign : `${callsign}-${ssid}`;
  const session = { callsign, ssid, address, auth, stationKey: stationKey || null, claim: "none", remember };
  const inbox = new Inbox();
  const catches = new Catches();
  try {
    // Asked again at each sign-in: what the server offers can change (`send` needs a listener that can transmit).
    await context.loadInfo({ fresh: true });
    const push = await pushFieldsIfSubscribed(state.info);
    api.stationKey = session.stationKey;
    let answer;
    const register = () =>
      api.call("register", {
        ...context.identity(session),
        ackMessages: false,
        wantHistory: true,
        since: inbox.cursor,
        want: WANT,
        ...push,
      });
    try {
      try {
        answer = await register();
      } catch (error) {
        // A key the server no longer knows (the claim was released, rotated elsewhere or lapsed): go on with
        // the passcode when there is one, else the user must sign in with it.
        if (error.status !== 401 || !session.stationKey) throw error;
        session.stationKey = null;
        api.stationKey = null;
        if (typeof auth !== "string") throw new APIError(t("signIn.keyInvalid"), { status: 401 });
        answer = await register();
      }
    } catch (error) {
      // Too many registrations this hour (many reloads): the passcode was right (it is checked first)
      // and the station is registered, so the history comes from a sync instead.
      if (error.status !== 429) throw error;
      answer = await api.call("sync", { ...context.identity(session), since: inbox.cursor, want: WANT });
    }
    state.pushOn = push.platform === "webpush";
    inbox.merge(answer.messages);
    inbox.advance(answer.serverTime);
    inbox.applyRead(answer.read);
    catches.merge(answer.messages);
    state.dropped = Number.isSafeInteger(answer.dropped) && answer.dropped > 0 ? answer.dropped : 0;
    state.avatars.note(answer.avatars);
    // Claimed only where the key can be kept ("remember"): a key lost at a reload would lock the owner out of
    // sending and settings until the claim lapses.
    session.claim = session.stationKey
      ? await keyClaim(context, session)
      : remember
        ? await claimStation(context, session)
        : await claimKnown(context, session);
  } catch (error) {
    context.showStatus(null);
    if (!(automatic && error.network)) {
      const reason = error instanceof APIError ? error.message : String(error);
      context.showSignIn({ message: t("signIn.failed", { reason }), focus: true });
      return false;
    }
  }
  state.session = session;
  state.inbox = inbox;
  state.catches = catches;
  if (remember) {
    // Never the passcode once this browser holds the station's key.
    writeJSON(STORE_SESSION, session.stationKey ? { callsign, ssid, stationKey: session.stationKey } : { callsign, ssid, auth });
  } else {
    forgetEverything();
  }
  context.signedIn({ focus: !automatic });
  loadSettings(context);
  state.avatars.fetchWanted().then((changed) => changed && context.render());
  startLive(context);
  await loadSendSupport(context);
  context.render();
  return true;
}

/**
 * Claims the signed-in station when nobody has: "mine" (the key is kept in the session and sent from now on),
 * "provisional" (the station was in use: the claim waits for the code pushed to its other devices), "other"
 * (another device holds it: reading works, sending and settings do not), or "none" (a server without claims,
 * or a refusal that is not about the claim).
 */
async function claimStation(context, session) {
  if (typeof session.auth !== "string" || !context.features().includes("claim")) return "none";
  try {
    const answer = await context.api.call("claim", { callsign: session.callsign, ssid: session.ssid, auth: session.auth });
    if (!isStationKey(answer.stationKey)) return "none";
    session.stationKey = answer.stationKey;
    context.api.stationKey = answer.stationKey;
    return answer.claim === "provisional" ? "provisional" : "mine";
  } catch (error) {
    return error.status === 409 ? "other" : "none";
  }
}

/**
 * Whether another device holds the claim of a station this browser signs in to without claiming: "other",
 * "none" or "unclaimed", told by a settings read, which a claimed station refuses with "is claimed".
 */
async function claimKnown(context, session) {
  if (!context.features().includes("claim")) return "none";
  try {
    await context.api.call("settings", context.identity(session));
    return "none";
  } catch (error) {
    return error.status === 403 && /is claimed/.test(error.message) ? "other" : "unclaimed";
  }
}

/**
 * How far the claim of the key this browser holds is proven: "provisional" when a settings read says so (a claim
 * of a station that was in use, waiting for its code), else "mine".
 */
async function keyClaim(context, session) {
  try {
    await context.api.call("settings", context.identity(session));
    return "mine";
  } catch (error) {
    return error.status === 403 && /provisional/.test(error.message) ? "provisional" : "mine";
  }
}

/** Proves a provisional claim with the code pushed to one of the station's other devices; throws on a refusal. */
export async function proveClaim(context, code) {
  const session = context.state.session;
  if (!session || session.claim !== "provisional") return;
  const answer = await context.api.call("claim", { callsign: session.callsign, ssid: session.ssid, code });
  if (answer.claim !== "proven") throw new APIError(String(answer.claim), { status: 200 });
  session.claim = "mine";
  context.render();
  // Proven, the key now governs: the owner's settings are read as after a sign-in.
  await loadSettings(context);
}

/** A new station key (rotated in the settings): sent from now on, and kept instead of the old one. */
export function keyChanged(context, key) {
  const session = context.state.session;
  session.stationKey = key;
  context.api.stationKey = key;
  if (session.remember) writeJSON(STORE_SESSION, { callsign: session.callsign, ssid: session.ssid, stationKey: key });
}

/** Signs out: this browser's notifications end, the claim is given up, and everything kept is forgotten. */
export async function signOut(context) {
  const { state, api } = context;
  const session = state.session;
  stopLive(context);
  if (session && state.pushOn) await dropPush(context, session);
  // "Sign out" forgets the key: give the claim up, or nobody could use it until it lapses (a device the key
  // was carried to loses it too).
  if (session?.claim === "mine" || session?.claim === "provisional") {
    await api.call("claim", { ...context.identity(session), release: true }).catch(() => {});
  }
  state.pushOn = false;
  state.inbox = new Inbox();
  state.catches = new Catches();
  state.dropped = 0;
  api.stationKey = null;
  forgetEverything();
  location.hash = "";
  context.showSignIn({ focus: true });
}
