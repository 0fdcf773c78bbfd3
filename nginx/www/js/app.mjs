// The page: sign in, the inbox, a conversation, sending, notifications, and (screens.mjs) the station's
// subscriptions and settings. It talks only to this server's /v1 API (docs/protocol.md) and degrades where the
// server lacks a feature: no /v1/info → no notifications and short polls; no `longpoll` → a sync every second;
// no /v1/send → the form says so. Every word comes from the string tables (i18n.mjs).

import { API, APIError } from "./api.mjs";
import { Avatars } from "./avatars.mjs";
import { LANGUAGES, formatDate, pickLanguage, setLanguage, t, tn, translateDocument } from "./i18n.mjs";
import { LiveSync } from "./live.mjs";
import { Catches, Inbox } from "./model.mjs";
import { Screens } from "./screens.mjs";
import { parseKeyLink } from "./settings.mjs";
import { currentSubscription, deviceFields, madeWithKey, pushSupport, subscribe } from "./push.mjs";
import { MAX_TEXT, checkText, isStationKey, parseIdentity, parsePasscode, parseStation, stateWord } from "./rules.mjs";

const $ = (id) => document.getElementById(id);
const api = new API(new URL("v1/", document.baseURI));
/** What "remember me" keeps: the station and its key, nothing else; the passcode only while this browser holds no
 * key (a station claimed by another device, or a server without claims). */
const STORE_SESSION = "aprs-cloud.session";
/** The language picked in the settings; not about the station, so it outlives a sign-out. */
const STORE_LANGUAGE = "aprs-cloud-language";
/** The opt-in answers the page takes (docs/protocol.md "Opt-in answers"): paging, drops and read markers, other
 * SSIDs' entries, subscription entries. */
const WANT = ["inbox", "ssids", "subscriptions"];

/** Everything the page knows; one signed-in station at a time. */
const state = {
  session: null, // {callsign, ssid, address, auth?, stationKey?, claim, remember}; claim: "mine" | "other" | "none"
  inbox: new Inbox(),
  catches: new Catches(),
  dropped: 0, // messages the server evicted before this page fetched them (`want:["inbox"]`'s `dropped`)
  settings: null, // readSettings() of the last /v1/settings answer; null: not read (not the owner)
  status: null, // the last live status, to say it again in another language
  avatars: new Avatars((stations) => api.call("avatars", { ...identity(), stations })),
  info: undefined, // undefined: not asked yet; null: the server has no /v1/info
  send: "unknown", // "yes" | "no" | "unknown"
  live: null,
  route: { view: "inbox", peer: null },
  pushOn: false,
  sending: null, // {clientId, to, text}: kept for a retry with the same clientId
};

/** The station's identity for a call: with a station key (sent as a header) the passcode may be left out. */
function identity(session = state.session) {
  const { callsign, ssid, auth } = session;
  return typeof auth === "string" ? { callsign, ssid, auth } : { callsign, ssid };
}

// ---------------------------------------------------------------------------------------------------
// Storage: only for a user who ticked "remember", and then only the station and its key (or, with no claim
// held, its passcode); never a message: a reload fetches the history from the server again.

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

function forgetEverything() {
  try {
    for (const key of Object.keys(localStorage)) {
      if (key.startsWith("aprs-cloud.")) localStorage.removeItem(key);
    }
  } catch {
    // Nothing stored.
  }
}

// ---------------------------------------------------------------------------------------------------
// Server information

async function loadInfo({ fresh = false } = {}) {
  if (state.info !== undefined && !(fresh && state.info !== null)) return state.info;
  try {
    state.info = await api.call("info", {});
  } catch (error) {
    // A 404 (or any refusal) means an older server without /v1/info; a network failure: ask again later.
    if (error instanceof APIError && !error.network) state.info = null;
    else return null;
  }
  return state.info;
}

function features() {
  return Array.isArray(state.info?.features) ? state.info.features : [];
}

/** Whether /v1/send exists: the server's feature list, or (without /v1/info) a probe with an empty body. */
async function loadSendSupport() {
  if (state.info) {
    state.send = features().includes("send") ? "yes" : "no";
    return;
  }
  try {
    await api.call("send", {});
    state.send = "yes";
  } catch (error) {
    if (error.network) state.send = "unknown";
    else state.send = error.status === 404 ? "no" : "yes";
  }
}

// ---------------------------------------------------------------------------------------------------
// Signing in and out

function showSignIn(message = "") {
  stopLive();
  state.session = null;
  state.settings = null;
  $("app").hidden = true;
  $("tabs").hidden = true;
  $("sign-in-view").hidden = false;
  $("station").hidden = true;
  $("sign-out").hidden = true;
  $("connection").textContent = "";
  $("sign-in-error").textContent = message;
  document.title = t("title");
}

/**
 * Signs in with the passcode (`auth`) or the station key of a claimed station (`stationKey`), or both. An
 * unclaimed station is claimed here (docs/protocol.md "Owned stations"): this browser then holds its key, which
 * "remember" keeps instead of the passcode. A station claimed by another device still signs in with the
 * passcode, to read; sending and settings need its key.
 */
async function signIn({ callsign, ssid, auth, stationKey, remember }, { automatic = false } = {}) {
  const button = $("sign-in-button");
  button.disabled = true;
  $("sign-in-error").textContent = "";
  $("connection").textContent = t("status.signingIn");
  const address = ssid === 0 ? callsign : `${callsign}-${ssid}`;
  const session = { callsign, ssid, address, auth, stationKey: stationKey || null, claim: "none", remember };
  const inbox = new Inbox();
  const catches = new Catches();
  try {
    // Asked again at each sign-in: what the server offers can change (`send` needs a listener that can transmit).
    await loadInfo({ fresh: true });
    const push = await pushFieldsIfSubscribed();
    api.stationKey = session.stationKey;
    let answer;
    const register = () =>
      api.call("register", {
        ...identity(session),
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
        if (typeof auth !== "string") {
          throw new APIError(t("signIn.keyInvalid"), { status: 401 });
        }
        answer = await register();
      }
      state.pushOn = push.platform === "webpush";
    } catch (error) {
      // Too many registrations this hour (many reloads): the passcode was right (it is checked first)
      // and the station is registered, so the history comes from a sync instead.
      if (error.status !== 429) throw error;
      answer = await api.call("sync", { ...identity(session), since: inbox.cursor, want: WANT });
      state.pushOn = push.platform === "webpush";
    }
    inbox.merge(answer.messages);
    inbox.advance(answer.serverTime);
    inbox.applyRead(answer.read);
    catches.merge(answer.messages);
    state.dropped = Number.isSafeInteger(answer.dropped) && answer.dropped > 0 ? answer.dropped : 0;
    state.avatars.note(answer.avatars);
    // Claimed only where the key can be kept ("remember"): a key lost at a reload would lock the owner out of
    // sending and settings until the claim lapses.
    session.claim = session.stationKey
      ? await keyClaim(session)
      : remember
        ? await claimStation(session)
        : await claimKnown(session);
  } catch (error) {
    button.disabled = false;
    $("connection").textContent = "";
    // A remembered station opened offline still shows what it has; the live loop keeps trying.
    if (!(automatic && error.network)) {
      $("sign-in-error").textContent = t("signIn.failed", { reason: error instanceof APIError ? error.message : String(error) });
      $("sign-in-view").hidden = false;
      $("callsign").focus();
      return;
    }
  }
  button.disabled = false;
  state.session = session;
  state.inbox = inbox;
  state.catches = catches;
  if (remember) {
    // Never the passcode once this browser holds the station's key.
    writeJSON(STORE_SESSION, session.stationKey ? { callsign, ssid, stationKey: session.stationKey } : { callsign, ssid, auth });
  } else {
    forgetEverything();
  }
  $("passcode").value = "";
  $("key-link-notice").hidden = true;
  $("sign-in-view").hidden = true;
  $("app").hidden = false;
  $("tabs").hidden = false;
  $("station").textContent = t("station.signedIn", { address });
  $("station").hidden = false;
  showClaimStatus();
  $("sign-out").hidden = false;
  route({ focus: false });
  screens.signedIn();
  if (!automatic) $("main").focus();
  state.avatars.fetchWanted().then((changed) => changed && render());
  startLive();
  await loadSendSupport();
  renderSendForm();
  await renderNotify();
}

/**
 * Claims the signed-in station when nobody has: "mine" (the key is kept in the session and sent from now on),
 * "other" (another device holds it: reading works, sending and settings do not), or "none" (a server without
 * claims, or a refusal that is not about the claim).
 */
async function claimStation(session) {
  if (typeof session.auth !== "string" || !features().includes("claim")) return "none";
  try {
    const answer = await api.call("claim", { callsign: session.callsign, ssid: session.ssid, auth: session.auth });
    if (!isStationKey(answer.stationKey)) return "none";
    session.stationKey = answer.stationKey;
    api.stationKey = answer.stationKey;
    // A station already in use: the claim waits for the code pushed to the station's other devices.
    return answer.claim === "provisional" ? "provisional" : "mine";
  } catch (error) {
    return error.status === 409 ? "other" : "none";
  }
}

/**
 * Whether another device holds the claim of a station this browser signs in to without claiming: "other" or
 * "none" (unclaimed), told by a settings read, which a claimed station refuses with "is claimed".
 */
async function claimKnown(session) {
  if (!features().includes("claim")) return "none";
  try {
    await api.call("settings", identity(session));
    return "none";
  } catch (error) {
    return error.status === 403 && /is claimed/.test(error.message) ? "other" : "unclaimed";
  }
}

/**
 * How far the claim of the key this browser holds is proven: "provisional" when a settings read says so (a claim
 * of a station that was in use, waiting for its code), else "mine".
 */
async function keyClaim(session) {
  try {
    await api.call("settings", identity(session));
    return "mine";
  } catch (error) {
    return error.status === 403 && /provisional/.test(error.message) ? "provisional" : "mine";
  }
}

function showClaimStatus() {
  const line = $("claim-status");
  const claim = state.session?.claim ?? "none";
  line.dataset.claim = claim;
  line.textContent = claim === "none" ? "" : t(`claim.${claim}`);
  line.hidden = claim === "none";
  $("claim-proof").hidden = claim !== "provisional";
}

/** Proves a provisional claim with the code pushed to one of the station's other devices. */
async function proveClaim(event) {
  event.preventDefault();
  const session = state.session;
  if (!session || session.claim !== "provisional") return;
  const code = $("claim-code").value.trim();
  $("claim-proof-error").textContent = "";
  try {
    const answer = await api.call("claim", { callsign: session.callsign, ssid: session.ssid, code });
    if (answer.claim !== "proven") throw new APIError(String(answer.claim), { status: 200 });
    session.claim = "mine";
    $("claim-code").value = "";
    showClaimStatus();
    renderSendForm();
    route({ focus: false });
  } catch (error) {
    $("claim-proof-error").textContent = t("claim.proofFailed", {
      reason: error instanceof APIError ? error.message : String(error),
    });
  }
}

async function signOut() {
  const session = state.session;
  stopLive();
  if (session && state.pushOn) {
    // This browser's notifications end with the session: drop the device on the server, then locally.
    try {
      const subscription = await currentSubscription();
      if (subscription) {
        await api
          .call("unregister", { ...identity(session), pushToken: subscription.endpoint })
          .catch(() => {});
        await subscription.unsubscribe();
      }
    } catch {
      // Best effort.
    }
  }
  // "Sign out" forgets the key: give the claim up, or nobody could use it until it lapses (a device the key
  // was carried to loses it too).
  if (session?.claim === "mine" || session?.claim === "provisional") {
    await api.call("claim", { ...identity(session), release: true }).catch(() => {});
  }
  state.pushOn = false;
  state.inbox = new Inbox();
  state.catches = new Catches();
  state.dropped = 0;
  api.stationKey = null;
  forgetEverything();
  location.hash = "";
  showSignIn();
  $("callsign").focus();
}

// ---------------------------------------------------------------------------------------------------
// Live updates

function startLive() {
  stopLive();
  const info = state.info;
  state.live = new LiveSync({
    call: (body, options) => api.call("sync", { ...identity(), ...body }, options),
    cursor: () => state.inbox.cursor,
    onAnswer: receive,
    onStatus: showStatus,
    want: WANT,
    longPoll: features().includes("longpoll"),
    maxWait: Number.isFinite(info?.maxWait) ? info.maxWait : 300,
    visible: () => document.visibilityState === "visible",
  });
  state.live.start();
}

function stopLive() {
  state.live?.stop();
  state.live = null;
}

function receive(answer) {
  const { received, changed } = state.inbox.merge(answer.messages);
  state.inbox.advance(answer.serverTime);
  const read = state.inbox.applyRead(answer.read);
  const caught = state.catches.merge(answer.messages);
  if (Number.isSafeInteger(answer.dropped) && answer.dropped > 0) state.dropped += answer.dropped;
  const avatarsChanged = state.avatars.note(answer.avatars);
  state.avatars.fetchWanted().then((fetched) => fetched && render());
  if (changed || read || caught > 0 || avatarsChanged || answer.dropped > 0) render();
  if (received.length > 0) {
    const newest = received[received.length - 1];
    $("announce").textContent =
      received.length === 1
        ? t("announce.one", { peer: newest.peer, text: newest.text.slice(0, 200) })
        : tn("announce.many", received.length, { peer: newest.peer });
  } else if (caught > 0) {
    $("announce").textContent = tn("announce.caught", caught);
  }
}

function showStatus(status) {
  const { mode, error, retryMs } = status;
  state.status = status;
  const line = $("connection");
  line.dataset.mode = mode;
  switch (mode) {
    case "live":
      line.textContent = t("status.live");
      break;
    case "polling":
      line.textContent = t("status.polling");
      break;
    case "offline":
      line.textContent = t("status.offline", { reason: error?.message ?? t("status.noAnswer"), seconds: Math.round(retryMs / 1000) });
      break;
    case "stopped":
      showSignIn(t("status.stopped", { reason: error?.message ?? t("status.refused") }));
      break;
    default:
      line.textContent = "";
  }
}

// Waking up: the network is back, the page is shown again, or the machine slept (a timer that fires
// far too late). Each starts a sync at once from the cursor.
window.addEventListener("online", () => state.live?.kick({ reconnect: true }));
// Going offline ends a held long poll at once, so the page says so instead of waiting for a timeout.
window.addEventListener("offline", () => state.live?.kick({ reconnect: true }));
document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "visible") {
    state.live?.kick();
    if (state.session) render();
  }
});
let lastTick = Date.now();
setInterval(() => {
  const now = Date.now();
  if (now - lastTick > 15000) state.live?.kick({ reconnect: true });
  lastTick = now;
}, 5000);

// ---------------------------------------------------------------------------------------------------
// Rendering

/** A <time> for epoch ms in the user's locale: the time today, else the date and time. */
function timeElement(ms) {
  const element = document.createElement("time");
  const date = new Date(ms);
  if (!Number.isFinite(date.getTime())) {
    element.textContent = "?";
    return element;
  }
  element.dateTime = date.toISOString();
  const today = new Date();
  element.textContent =
    date.toDateString() === today.toDateString()
      ? formatDate(ms, { hour: "2-digit", minute: "2-digit" })
      : formatDate(ms, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
  return element;
}

function render() {
  if (!state.session) return;
  const { view, peer } = state.route;
  $("app").dataset.view = view === "new" ? "conversation" : view;
  for (const [tab, views] of [["tab-inbox", ["inbox", "conversation", "new"]], ["tab-subs", ["subs"]], ["tab-settings", ["settings"]]]) {
    if (views.includes(view)) $(tab).setAttribute("aria-current", "page");
    else $(tab).removeAttribute("aria-current");
  }
  if (peer && view === "conversation" && document.visibilityState === "visible") {
    const upTo = state.inbox.markRead(peer);
    if (upTo > 0) postRead(peer, upTo);
  }
  safely(renderInbox);
  safely(renderConversation);
  safely(() => screens.render());
  const unread = state.inbox.totalUnread();
  document.title = unread > 0 ? `(${unread}) ${t("title")}` : t("title");
}

/** Runs one part of the page's rendering; a failure is logged and the other parts still show. */
function safely(part) {
  try {
    part();
  } catch (error) {
    console.warn("a part of the page could not be shown:", error);
  }
}

/**
 * Tells the server (and so every device of the station) that the conversation with `peer` (or "*": all) is read
 * up to `upTo`. Best effort: a station claimed by another device may not (403), an older server has no /v1/read.
 */
function postRead(peer, upTo) {
  const claim = state.session?.claim;
  if (claim === "other" || (claim !== "mine" && typeof state.session?.auth !== "string")) return;
  api.call("read", { ...identity(), peer, upTo }).catch(() => {});
}

function markAllRead() {
  const upTo = state.inbox.markAllRead();
  if (upTo > 0) postRead("*", upTo);
  render();
  $("announce").textContent = t("inbox.allRead");
}

/**
 * One list item built by `build`, or, when that throws (an entry no rule foresaw), the entry as a plain text
 * line, and the failure logged: one entry never takes the list, the page or the sync loop down with it.
 */
function safeItem(build, entry, tag = "li") {
  try {
    return build();
  } catch (error) {
    console.warn("an entry could not be shown as it is:", error, entry);
    const item = document.createElement(tag);
    item.className = "plain-entry";
    let text;
    try {
      text = `${String(entry?.peer ?? "?").slice(0, 64)}: ${String(entry?.text ?? entry?.last?.text ?? "").slice(0, 500)}`;
    } catch {
      text = "?";
    }
    item.textContent = text;
    return item;
  }
}

function renderInbox() {
  const list = $("conversations");
  const focused = list.contains(document.activeElement) ? document.activeElement.getAttribute("href") : null;
  const conversations = state.inbox.conversations();
  const items = conversations.map((conversation) => safeItem(() => conversationItem(conversation), conversation));
  list.replaceChildren(...items);
  $("empty-inbox").hidden = conversations.length > 0;
  $("read-all").hidden = state.inbox.totalUnread() === 0;
  $("dropped").hidden = state.dropped === 0;
  $("dropped").textContent = state.dropped > 0 ? tn("inbox.dropped", state.dropped) : "";
  if (focused) list.querySelector(`a[href="${CSS.escape(focused)}"]`)?.focus();
}

function conversationItem({ peer, last, unread }) {
  const item = document.createElement("li");
  const link = document.createElement("a");
  link.className = "conversation-link";
  link.href = `#/c/${encodeURIComponent(peer)}`;
  link.dataset.peer = peer;
  if (state.route.view === "conversation" && state.route.peer === peer) link.setAttribute("aria-current", "true");
  const who = document.createElement("span");
  who.className = "who";
  const name = document.createElement("span");
  name.className = "peer";
  name.textContent = peer;
  who.append(name, timeElement(last.order));
  const preview = document.createElement("span");
  preview.className = "preview";
  preview.textContent = last.direction === "sent" ? t("inbox.you", { text: last.text }) : last.text;
  const body = document.createElement("span");
  body.className = "summary";
  body.append(who, preview);
  link.append(state.avatars.element(peer), body);
  if (unread > 0) {
    const badge = document.createElement("span");
    badge.className = "unread";
    badge.textContent = String(unread);
    const words = document.createElement("span");
    words.className = "visually-hidden";
    words.textContent = ` ${tn("inbox.unread", unread)}`;
    badge.append(words);
    link.append(badge);
  }
  item.append(link);
  return item;
}

function renderConversation() {
  const { view, peer } = state.route;
  const title = $("conversation-title");
  const list = $("messages");
  const showing = view === "conversation" && peer;
  title.textContent = showing ? peer : view === "new" ? t("inbox.new") : t("conversation.choose");
  $("conversation-avatar").replaceChildren(...(showing ? [state.avatars.element(peer)] : []));
  const nearBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 80;
  const entries = showing ? state.inbox.conversation(peer) : [];
  const items = entries.map((entry) => safeItem(() => messageItem(entry), entry));
  list.replaceChildren(...items);
  list.hidden = !showing;
  $("conversation-empty").hidden = Boolean(showing) || view === "new";
  $("conversation-empty").textContent =
    showing || state.inbox.conversations().length > 0 ? t("conversation.pick") : t("conversation.none");
  if (nearBottom || items.length < 4) list.scrollTop = list.scrollHeight;
}

function messageItem(entry) {
  const item = document.createElement("li");
  item.className = `message ${entry.direction}`;
  item.dataset.key = entry.key;
  const who = document.createElement("span");
  who.className = "visually-hidden";
  who.textContent = entry.direction === "sent" ? t("message.youWrote") : t("message.wrote", { peer: entry.peer });
  const text = document.createElement("p");
  text.className = "text";
  text.textContent = entry.text;
  const meta = document.createElement("p");
  meta.className = "meta";
  meta.append(timeElement(entry.order));
  if (entry.to && entry.to !== state.session.address) meta.append(" · ", t("message.to", { to: entry.to }));
  const word = entry.direction === "sent" ? stateWord(entry.state) : null;
  if (word) {
    const status = document.createElement("span");
    status.className = "state";
    status.dataset.state = entry.state;
    status.textContent = word;
    meta.append(" · ", status);
  }
  item.append(who, text, meta);
  return item;
}

function renderSendForm() {
  const claim = state.session?.claim;
  const unavailable = state.send === "no" || claim === "other" || claim === "unclaimed" || claim === "provisional";
  $("send-unavailable").textContent =
    claim === "other"
      ? t("send.claimedOther")
      : claim === "unclaimed"
        ? t("send.unclaimed")
        : claim === "provisional"
          ? t("claim.provisional")
          : t("send.noServer");
  $("send-fields").disabled = unavailable;
  $("send-fields").hidden = unavailable;
  $("send-unavailable").hidden = !unavailable;
  $("new-message").hidden = unavailable;
}

// ---------------------------------------------------------------------------------------------------
// Routing: #/ (inbox), #/c/PEER (a conversation), #/new (a new message), #/subs, #/settings.

function readRoute() {
  let hash;
  try {
    hash = decodeURIComponent(location.hash.replace(/^#\/?/, ""));
  } catch {
    // A malformed escape (#/c/%) is no route: the inbox.
    return { view: "inbox", peer: null };
  }
  if (hash.startsWith("c/")) {
    const parsed = parseStation(hash.slice(2));
    if (parsed.address) return { view: "conversation", peer: parsed.address };
  }
  if (hash === "new") return { view: "new", peer: null };
  if (hash === "subs" || hash === "settings") return { view: hash, peer: null };
  return { view: "inbox", peer: null };
}

function route({ focus = true } = {}) {
  const previous = state.route;
  state.route = readRoute();
  if (state.route.view === "conversation" && state.route.peer !== previous.peer) {
    $("to").value = state.route.peer;
    clearFieldError("to");
  } else if (state.route.view === "new" && previous.view !== "new") {
    $("to").value = "";
  }
  render();
  if (!focus || !state.session) return;
  if (state.route.view === "new") $("to").focus();
  else if (state.route.view === "conversation") $("conversation-title").focus();
  else if (state.route.view === "subs") $("subs-title").focus();
  else if (state.route.view === "settings") $("settings-title").focus();
  else if (previous.peer) document.querySelector(`.conversation-link[data-peer="${CSS.escape(previous.peer)}"]`)?.focus();
}

// A key link opened in a tab that shows the page already is a change of the fragment, not a load.
window.addEventListener("hashchange", () => {
  if (location.hash.startsWith("#key=")) takeKeyLink();
  else route();
});

// ---------------------------------------------------------------------------------------------------
// Sending

function clearFieldError(field) {
  $(`${field}-error`).textContent = "";
  $(field).removeAttribute("aria-invalid");
}

function showTextCheck() {
  const { count, errors, notes } = checkText($("message").value);
  const counter = $("message-count");
  counter.textContent = t("send.count", { count, max: MAX_TEXT });
  counter.parentElement.classList.toggle("over", count > MAX_TEXT);
  $("message-error").textContent = errors.join(" ");
  $("message-note").textContent = notes.join(" ");
  if (errors.length > 0) $("message").setAttribute("aria-invalid", "true");
  else $("message").removeAttribute("aria-invalid");
  return errors;
}

async function send(event) {
  event.preventDefault();
  if (!state.session || state.send === "no") return;
  $("send-status").textContent = "";
  const to = parseStation($("to").value);
  // Radios drop spaces at the end of a message (so the server refuses them): they go before sending.
  const text = $("message").value.replace(/ +$/, "");
  const errors = showTextCheck();
  if (to.error) {
    $("to-error").textContent = to.error;
    $("to").setAttribute("aria-invalid", "true");
    $("to").focus();
    return;
  }
  clearFieldError("to");
  if (errors.length > 0) {
    $("message").focus();
    return;
  }
  if (text.trim() === "") {
    $("message-error").textContent = t("send.empty");
    $("message").setAttribute("aria-invalid", "true");
    $("message").focus();
    return;
  }
  // The same text to the same station after a failure is a retry: same clientId, never sent twice.
  if (!state.sending || state.sending.to !== to.address || state.sending.text !== text) {
    state.sending = { clientId: newClientId(), to: to.address, text };
  }
  const button = $("send-button");
  button.disabled = true;
  button.textContent = t("send.sending");
  try {
    const answer = await api.call("send", {
      ...identity(),
      to: to.address,
      text,
      clientId: state.sending.clientId,
    });
    state.sending = null;
    state.inbox.merge([answer.message]);
    $("message").value = "";
    showTextCheck();
    if (state.route.peer !== to.address) location.hash = `#/c/${encodeURIComponent(to.address)}`;
    else render();
    $("message").focus();
  } catch (error) {
    if (error.status === 404 && state.info === null && /no such endpoint/i.test(error.message)) {
      state.send = "no";
      renderSendForm();
    }
    $("send-status").textContent = t("send.failed", { reason: error.message });
  } finally {
    button.disabled = false;
    button.textContent = t("send.button");
  }
}

function newClientId() {
  if (globalThis.crypto?.randomUUID) return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return [...bytes].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

// ---------------------------------------------------------------------------------------------------
// Notifications

/** The push fields for register when this browser already holds a subscription made with the server's key. */
async function pushFieldsIfSubscribed() {
  const support = pushSupport(state.info);
  if (!support.ok) return {};
  try {
    const subscription = await currentSubscription();
    if (subscription && madeWithKey(subscription, support.key)) return deviceFields(subscription);
  } catch {
    // No subscription to carry.
  }
  return {};
}

async function renderNotify() {
  const enable = $("enable-notifications");
  const disable = $("disable-notifications");
  const status = $("notify-status");
  const support = pushSupport(state.info);
  disable.hidden = true;
  enable.hidden = false;
  if (!support.ok) {
    enable.disabled = true;
    status.textContent = support.reason;
    return;
  }
  if (state.pushOn) {
    enable.hidden = true;
    disable.hidden = false;
    status.textContent = t("notify.on", { address: state.session.address });
    return;
  }
  enable.disabled = false;
  status.textContent = t("notify.offer");
}

async function enableNotifications() {
  const support = pushSupport(state.info);
  if (!support.ok || !state.session) return;
  const status = $("notify-status");
  const button = $("enable-notifications");
  button.disabled = true;
  status.textContent = t("notify.turningOn");
  try {
    const subscription = await subscribe(support.key);
    await api.call("register", {
      ...identity(),
      ackMessages: false,
      wantHistory: false,
      since: state.inbox.cursor,
      ...deviceFields(subscription),
    });
    state.pushOn = true;
    await renderNotify();
    $("disable-notifications").focus();
  } catch (error) {
    button.disabled = false;
    status.textContent = t("notify.failed", { reason: error.message });
  }
}

async function disableNotifications() {
  const status = $("notify-status");
  try {
    const subscription = await currentSubscription();
    if (subscription) {
      await api.call("unregister", { ...identity(), pushToken: subscription.endpoint });
      await subscription.unsubscribe();
    }
    state.pushOn = false;
    await renderNotify();
    $("enable-notifications").focus();
  } catch (error) {
    status.textContent = t("notify.stillOn", { reason: error.message });
  }
}

// ---------------------------------------------------------------------------------------------------
// The service worker (notifications, and the page offline)

const workerPolicy = globalThis.trustedTypes?.createPolicy("aprs-cloud", {
  createScriptURL(url) {
    const wanted = new URL("sw.js", document.baseURI).href;
    if (url !== wanted) throw new TypeError(`not the service worker: ${url}`);
    return url;
  },
});

async function registerWorker() {
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
    if (data.type === "push") state.live?.kick();
  });
}

// ---------------------------------------------------------------------------------------------------
// Start

// ---------------------------------------------------------------------------------------------------
// Language

/** The language picked in the settings ("en", "de"), or null: the browser's. */
function pickedLanguage() {
  try {
    const picked = localStorage.getItem(STORE_LANGUAGE);
    return LANGUAGES.has(picked) ? picked : null;
  } catch {
    return null;
  }
}

function applyLanguage() {
  const browser = pickLanguage(navigator.languages ?? [navigator.language]);
  const picked = pickedLanguage();
  // The user's own locale for dates when it is of the language picked (de-AT stays de-AT), else the language.
  if (picked && picked !== browser.language) setLanguage(picked, picked);
  else setLanguage(browser.language, browser.locale);
  translateDocument(document);
  for (const select of document.querySelectorAll(".language-select")) {
    const options = [["", t("settings.languageAuto")], ...[...LANGUAGES].map(([code, { name }]) => [code, name])];
    select.replaceChildren(
      ...options.map(([value, name]) => {
        const option = document.createElement("option");
        option.value = value;
        option.textContent = name;
        if (value !== "") option.lang = value;
        return option;
      }),
    );
    select.value = picked ?? "";
  }
  const ssid = $("ssid");
  ssid.options[0].textContent = t("signIn.ssidNone");
}

/** Switches the language and says every sentence on the page again in it. */
function changeLanguage(value) {
  try {
    if (LANGUAGES.has(value)) localStorage.setItem(STORE_LANGUAGE, value);
    else localStorage.removeItem(STORE_LANGUAGE);
  } catch {
    // Not kept: this visit still switches.
  }
  applyLanguage();
  showTextCheck();
  if (!state.session) document.title = t("title");
  if (state.session) {
    $("station").textContent = t("station.signedIn", { address: state.session.address });
    showClaimStatus();
    renderSendForm();
    renderNotify();
    if (state.status) showStatus(state.status);
    screens.retranslate();
    render();
  }
}

/**
 * A key link (`#key=N0CALL-7:<key>`, made by the settings of the device that holds the key) opened here: the
 * fragment leaves the address bar and the history at once, and the sign-in form is filled in with the key and
 * "remember" ticked; one press of "Sign in" keeps it on this device. True when there was one.
 */
function takeKeyLink() {
  if (!location.hash.startsWith("#key=")) return false;
  const link = parseKeyLink(location.hash);
  history.replaceState(null, "", location.pathname + location.search);
  showSignIn(link ? "" : t("keyLink.bad"));
  if (!link) return true;
  $("callsign").value = link.callsign;
  $("ssid").value = String(link.ssid);
  $("station-key").value = link.key;
  $("station-key-box").open = true;
  $("remember").checked = true;
  const notice = $("key-link-notice");
  notice.textContent = t("keyLink.notice", { station: link.ssid === 0 ? link.callsign : `${link.callsign}-${link.ssid}` });
  notice.hidden = false;
  $("sign-in-button").focus();
  return true;
}

function setUp() {
  const ssid = $("ssid");
  for (let value = 0; value <= 15; value += 1) {
    const option = document.createElement("option");
    option.value = String(value);
    option.textContent = String(value);
    ssid.append(option);
  }
  applyLanguage();
  for (const select of document.querySelectorAll(".language-select")) {
    select.addEventListener("change", () => changeLanguage(select.value));
  }
  // An inbox an older version of this page kept in the browser's storage goes: messages are never kept there.
  try {
    for (const key of Object.keys(localStorage)) if (key.startsWith("aprs-cloud.inbox.")) localStorage.removeItem(key);
  } catch {
    // No storage.
  }
  $("sign-in-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const station = parseIdentity($("callsign").value, $("ssid").value);
    const stationKey = $("station-key").value.trim();
    // With a station key the passcode may stay empty.
    const passcode = stationKey && $("passcode").value.trim() === "" ? { passcode: undefined } : parsePasscode($("passcode").value);
    const problem =
      station.error ??
      passcode.error ??
      (stationKey && !isStationKey(stationKey)
        ? t("signIn.keyFormat")
        : undefined);
    if (problem) {
      $("sign-in-error").textContent = problem;
      (station.error ? $("callsign") : $("passcode")).focus();
      return;
    }
    $("callsign").value = station.callsign;
    $("ssid").value = String(station.ssid);
    signIn({
      callsign: station.callsign,
      ssid: station.ssid,
      auth: passcode.passcode,
      stationKey: stationKey || null,
      remember: $("remember").checked,
    });
    $("station-key").value = "";
  });
  $("sign-out").addEventListener("click", signOut);
  $("claim-proof").addEventListener("submit", proveClaim);
  $("send-form").addEventListener("submit", send);
  $("message").addEventListener("input", showTextCheck);
  $("message").addEventListener("keydown", (event) => {
    // APRS messages are one line: Enter sends, and no key adds a line break.
    if (event.key === "Enter" && !event.isComposing) {
      event.preventDefault();
      $("send-form").requestSubmit();
    }
  });
  $("to").addEventListener("input", () => clearFieldError("to"));
  $("enable-notifications").addEventListener("click", enableNotifications);
  $("disable-notifications").addEventListener("click", disableNotifications);
  $("read-all").addEventListener("click", markAllRead);
  screens.setUp();
  showTextCheck();

  registerWorker();
  if (takeKeyLink()) {
    loadInfo();
    return;
  }
  state.route = readRoute();
  const saved = readJSON(STORE_SESSION);
  const station = saved ? parseIdentity(saved.callsign, saved.ssid) : null;
  const savedAuth = typeof saved?.auth === "string" ? saved.auth : undefined;
  const savedKey = isStationKey(saved?.stationKey) ? saved.stationKey : null;
  if (station?.callsign && (savedAuth || savedKey)) {
    $("callsign").value = station.callsign;
    $("ssid").value = String(station.ssid);
    $("remember").checked = true;
    signIn(
      { callsign: station.callsign, ssid: station.ssid, auth: savedAuth, stationKey: savedKey, remember: true },
      { automatic: true },
    );
  } else {
    showSignIn();
    loadInfo();
  }
}

/** A new station key (rotated in the settings): sent from now on, and kept instead of the old one. */
function keyChanged(key) {
  const session = state.session;
  session.stationKey = key;
  api.stationKey = key;
  if (session.remember) writeJSON(STORE_SESSION, { callsign: session.callsign, ssid: session.ssid, stationKey: key });
}

const screens = new Screens({ api, state, identity, render, features, timeElement, safeItem, keyChanged });

setUp();
