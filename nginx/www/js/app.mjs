// The page: its state, its routes and its boot. It talks only to this server's /v1 API (docs/protocol.md) and
// degrades where the server lacks a feature: no /v1/info → no notifications and short polls; no `longpoll` → a
// sync every second; no /v1/send → the form says so. Every word comes from the string tables (i18n.mjs).
//
// One file per screen (screens/*.mjs, each the interface of screens/screen.mjs), each given the one `context`
// made here: the state and the actions. What is not a screen has a module of its own: signing in and out
// (session.mjs), the live loop and read markers (sync.mjs), sending (sending.mjs), notifications and the
// service worker (notifications.mjs), the station's settings (station.mjs).

import { API, APIError } from "./api.mjs";
import { Avatars } from "./avatars.mjs";
import { $, safely } from "./dom.mjs";
import { applyLanguage, keepLanguage, t } from "./i18n.mjs";
import { Catches, Inbox } from "./model.mjs";
import { disableNotifications, enableNotifications, registerWorker } from "./notifications.mjs";
import { parseStation } from "./rules.mjs";
import { ConversationScreen } from "./screens/conversation.mjs";
import { InboxScreen } from "./screens/inbox.mjs";
import { SettingsScreen } from "./screens/settings.mjs";
import { SignInScreen } from "./screens/signin.mjs";
import { SubscriptionsScreen } from "./screens/subscriptions.mjs";
import { TopBarScreen } from "./screens/topbar.mjs";
import { sendMessage } from "./sending.mjs";
import { forgetOldInboxes, keyChanged, proveClaim, remembered, signIn, signOut } from "./session.mjs";
import { parseKeyLink } from "./settings.mjs";
import { updateSettings, watchZone } from "./station.mjs";
import { postRead, stopLive, watchWake } from "./sync.mjs";

const api = new API(new URL("v1/", document.baseURI));

/** Everything the page knows; one signed-in station at a time. */
const state = {
  session: null, // {callsign, ssid, address, auth?, stationKey?, claim, remember}; claim: "mine" | "provisional" | "other" | "unclaimed" | "none"
  inbox: new Inbox(),
  catches: new Catches(),
  dropped: 0, // messages the server evicted before this page fetched them (`want:["inbox"]`'s `dropped`)
  settings: null, // readSettings() of the last /v1/settings answer; null: not read (not the owner)
  settingsError: "", // why the settings could not be read at sign-in
  status: null, // the connection's: {mode: "signingIn"} or the live loop's last status; null: nothing to say
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

function features() {
  return Array.isArray(state.info?.features) ? state.info.features : [];
}

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

/**
 * What every screen and module is given: the state, the API, and the actions (screens/screen.mjs). The modules
 * that are not screens (session.mjs, sync.mjs …) also tell the page through it what happened: `showStatus`,
 * `showSignIn`, `signedIn`.
 */
const context = {
  state,
  api,
  identity,
  features,
  loadInfo,
  /** Whether this browser holds the station key (and so may send, and read and change the settings). */
  owner: () => state.session?.claim === "mine",
  call: (name, fields = {}, options) => api.call(name, { ...identity(), ...fields }, options),
  render,
  showStatus,
  showSignIn,
  signedIn,
  actions: {
    signIn: (credentials, options) => signIn(context, credentials, options),
    signOut: () => signOut(context),
    proveClaim: (code) => proveClaim(context, code),
    keyChanged: (key) => keyChanged(context, key),
    send: (to, text) => sendMessage(context, to, text),
    postRead: (peer, upTo) => postRead(context, peer, upTo),
    updateSettings: (fields) => updateSettings(context, fields),
    enableNotifications: () => enableNotifications(context),
    disableNotifications: () => disableNotifications(context),
    changeLanguage,
    render,
  },
};

const signInScreen = new SignInScreen(context);
const topBar = new TopBarScreen(context);
/** The signed-in screens by the route views they show; drawn in this order (a conversation shown is read
 * before the inbox counts what is unread). */
const screens = { conversation: new ConversationScreen(context), inbox: new InboxScreen(context), subs: new SubscriptionsScreen(context), settings: new SettingsScreen(context) };
const SCREEN_OF_VIEW = { inbox: "inbox", conversation: "conversation", new: "conversation", subs: "subs", settings: "settings" };

/** Draws the page again from `state`: every screen's update(). */
function render() {
  safely(() => topBar.update());
  if (!state.session) {
    safely(() => signInScreen.update());
    document.title = t("title");
    return;
  }
  for (const screen of Object.values(screens)) safely(() => screen.update());
  const unread = state.inbox.totalUnread();
  document.title = unread > 0 ? `(${unread}) ${t("title")}` : t("title");
}

/** The connection's status (signing in, or the live loop's); a refused passcode signs the page out. */
function showStatus(status) {
  if (status?.mode === "stopped") {
    showSignIn({ message: t("status.stopped", { reason: status.error?.message ?? t("status.refused") }) });
    return;
  }
  state.status = status;
  safely(() => topBar.update());
}

/** The sign-in screen instead of the station's (`params`: the sign-in screen's show()). */
function showSignIn(params = {}) {
  stopLive(context);
  state.session = null;
  state.settings = null;
  state.status = null;
  $("app").hidden = true;
  topBar.hide();
  for (const screen of Object.values(screens)) screen.hide();
  signInScreen.show(params);
  render();
}

/** A station just signed in: its screens instead of the sign-in screen. */
function signedIn({ focus }) {
  signInScreen.hide();
  $("app").hidden = false;
  topBar.show();
  // No screen of this station was shown yet: each fills its fields from the route as if coming from the inbox
  // (a conversation opened at its own address gets its "To").
  state.route = { view: "inbox", peer: null };
  route({ focus: false });
  if (focus) $("main").focus();
}

// ---------------------------------------------------------------------------------------------------
// Routing: #/ (inbox), #/c/PEER (a conversation), #/new (a new message), #/subs, #/settings; #key=… a key link.

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
  if (!state.session) return;
  const { view } = state.route;
  $("app").dataset.view = view === "new" ? "conversation" : view;
  render();
  const shown = screens[SCREEN_OF_VIEW[view]];
  for (const screen of Object.values(screens)) if (screen !== shown) screen.hide();
  shown.show({ ...state.route, previous, focus });
}

/**
 * A key link (`#key=N0CALL-7:<key>`, made by the settings of the device that holds the key) opened here: the
 * fragment leaves the address bar and the history at once, and the sign-in screen is filled in with it. True
 * when there was one.
 */
function takeKeyLink() {
  if (!location.hash.startsWith("#key=")) return false;
  const link = parseKeyLink(location.hash);
  history.replaceState(null, "", location.pathname + location.search);
  showSignIn({ message: link ? "" : t("keyLink.bad"), keyLink: link });
  return true;
}

// A key link opened in a tab that shows the page already is a change of the fragment, not a load.
window.addEventListener("hashchange", () => {
  if (location.hash.startsWith("#key=")) takeKeyLink();
  else route();
});

/** Switches the language and says every sentence on the page again in it. */
function changeLanguage(value) {
  keepLanguage(value);
  retranslate();
  render();
}

function retranslate() {
  applyLanguage();
  for (const screen of [signInScreen, topBar, ...Object.values(screens)]) safely(() => screen.retranslate());
}

// ---------------------------------------------------------------------------------------------------
// Boot

retranslate();
forgetOldInboxes();
watchWake(context);
watchZone(context);
registerWorker({ kick: () => state.live?.kick() });
if (takeKeyLink()) {
  loadInfo();
} else {
  state.route = readRoute();
  const saved = remembered();
  if (saved) {
    signIn(context, saved, { automatic: true });
  } else {
    showSignIn();
    loadInfo();
  }
}
