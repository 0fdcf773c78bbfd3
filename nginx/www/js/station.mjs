// The station's settings as the page holds them (`state.settings`, readSettings() of the last /v1/settings
// answer; null: not read, as for a browser without the station key): read at sign-in, changed by the screens
// through updateSettings(), and quiet hours kept in the browser's zone. The rules are in settings.mjs.

import { t } from "./i18n.mjs";
import { browserOffset, quietOffsetUpdate, readSettings } from "./settings.mjs";

/** How often an open page checks that quiet hours still use the browser's zone (summer time), ms. */
const ZONE_CHECK_MS = 15 * 60 * 1000;

/**
 * Sends `fields` to /v1/settings (none: a read) and takes the answer: `state.settings` and every screen follow.
 * Throws the APIError.
 */
export async function updateSettings(context, fields = {}) {
  const answer = await context.call("settings", fields);
  context.state.settings = readSettings(answer);
  context.render();
  return context.state.settings;
}

/**
 * After a sign-in: the owner's settings are read (and quiet hours moved to this browser's zone); a failure is
 * kept in `state.settingsError` for the settings screen to say.
 */
export async function loadSettings(context) {
  const { state } = context;
  state.settings = null;
  state.settingsError = "";
  context.render();
  if (!context.owner()) return;
  try {
    await updateSettings(context);
    await keepZone(context);
  } catch (error) {
    state.settingsError = t("settings.loadFailed", { reason: error.message });
    context.render();
  }
}

/** Quiet hours stay at the same local times when the browser's zone or summer time changes. */
export async function keepZone(context) {
  const { state } = context;
  if (!context.owner() || !state.settings) return;
  const update = quietOffsetUpdate(state.settings, browserOffset());
  if (!update) return;
  try {
    await updateSettings(context, update);
  } catch (error) {
    console.warn("quiet hours not moved to this zone:", error);
  }
}

/** Checks the zone whenever the page is shown again, and every quarter of an hour while it is open. */
export function watchZone(context) {
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") keepZone(context);
  });
  setInterval(() => keepZone(context), ZONE_CHECK_MS);
}

/**
 * Why the station's own screens are locked for this browser ("" when it holds the station key): another device
 * holds it, the station is not claimed, the claim is provisional, or the server keeps no claims.
 */
export function lockedReason(context) {
  if (context.owner()) return "";
  const claim = context.state.session?.claim;
  if (claim === "provisional") return t("claim.provisional");
  return t(claim === "other" || claim === "unclaimed" ? `settings.locked.${claim}` : "settings.locked.none");
}
