// The page kept live (live.mjs runs the loop): each sync's answer merged into the inbox, the subscriptions'
// entries and the avatars, the connection's status shown, the loop woken when the page comes back (the network,
// the page shown again, the machine awake after a sleep), and read markers sent to every device of the station.

import { announce } from "./dom.mjs";
import { t, tn } from "./i18n.mjs";
import { LiveSync } from "./live.mjs";

/** The opt-in answers the page takes (docs/protocol.md "Opt-in answers"): paging, drops and read markers, other
 * SSIDs' entries, subscription entries. */
export const WANT = ["inbox", "ssids", "subscriptions"];

/** Starts the live loop for the signed-in station (one at a time). */
export function startLive(context) {
  const { state } = context;
  stopLive(context);
  const info = state.info;
  state.live = new LiveSync({
    call: (body, options) => context.call("sync", body, options),
    cursor: () => state.inbox.cursor,
    onAnswer: (answer) => receive(context, answer),
    onStatus: (status) => context.showStatus(status),
    want: WANT,
    longPoll: context.features().includes("longpoll"),
    maxWait: Number.isFinite(info?.maxWait) ? info.maxWait : 300,
    visible: () => document.visibilityState === "visible",
  });
  state.live.start();
}

export function stopLive({ state }) {
  state.live?.stop();
  state.live = null;
}

function receive(context, answer) {
  const { state } = context;
  const { received, changed } = state.inbox.merge(answer.messages);
  state.inbox.advance(answer.serverTime);
  const read = state.inbox.applyRead(answer.read);
  const caught = state.catches.merge(answer.messages);
  if (Number.isSafeInteger(answer.dropped) && answer.dropped > 0) state.dropped += answer.dropped;
  const avatarsChanged = state.avatars.note(answer.avatars);
  state.avatars.fetchWanted().then((fetched) => fetched && context.render());
  if (changed || read || caught > 0 || avatarsChanged || answer.dropped > 0) context.render();
  if (received.length > 0) {
    const newest = received[received.length - 1];
    announce(
      received.length === 1
        ? t("announce.one", { peer: newest.peer, text: newest.text.slice(0, 200) })
        : tn("announce.many", received.length, { peer: newest.peer }),
    );
  } else if (caught > 0) {
    announce(tn("announce.caught", caught));
  }
}

/**
 * Tells the server (and so every device of the station) that the conversation with `peer` (or "*": all) is read
 * up to `upTo`. Best effort: a station claimed by another device may not (403), an older server has no /v1/read.
 */
export function postRead(context, peer, upTo) {
  const session = context.state.session;
  const claim = session?.claim;
  if (claim === "other" || (claim !== "mine" && typeof session?.auth !== "string")) return;
  context.call("read", { peer, upTo }).catch(() => {});
}

/**
 * Waking up: the network is back, the page is shown again, or the machine slept (a timer that fires far too
 * late). Each starts a sync at once from the cursor; a page shown again is drawn again (times, read markers).
 */
export function watchWake(context) {
  const { state } = context;
  window.addEventListener("online", () => state.live?.kick({ reconnect: true }));
  // Going offline ends a held long poll at once, so the page says so instead of waiting for a timeout.
  window.addEventListener("offline", () => state.live?.kick({ reconnect: true }));
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") {
      state.live?.kick();
      if (state.session) context.render();
    }
  });
  let lastTick = Date.now();
  setInterval(() => {
    const now = Date.now();
    if (now - lastTick > 15000) state.live?.kick({ reconnect: true });
    lastTick = now;
  }, 5000);
}
