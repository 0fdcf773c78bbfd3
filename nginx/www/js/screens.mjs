// The station's own screens: subscriptions (#/subs) and settings (#/settings) with mute presets, quiet hours
// kept in the browser's zone, the key link for another device, export and forwarding targets. Everything here
// needs the station key (docs/protocol.md "Owned stations"): a page without it says why and shows only what it
// may (the language, what subscriptions caught). The rules and checks are in settings.mjs; this is the DOM.

import { formatDate, t, tn } from "./i18n.mjs";
import { isStationKey } from "./rules.mjs";
import {
  MAX_FORWARD,
  MAX_SUBSCRIPTIONS,
  browserOffset,
  forwardDraft,
  forwardTypes,
  keyLink,
  minutesToTime,
  muteUntil,
  quietOffsetUpdate,
  readAudit,
  readSettings,
  settingsRequest,
  subscriptionBody,
  subscriptionDraft,
} from "./settings.mjs";

const $ = (id) => document.getElementById(id);

/** How often an open page checks that quiet hours still use the browser's zone (summer time), ms. */
const ZONE_CHECK_MS = 15 * 60 * 1000;

/** The form fields whose errors `settingsRequest` names, and where each is shown. */
const ERROR_FIELDS = new Map([
  ["blocked", ["blocked", "blocked-error"]],
  ["bypass", ["bypass", "bypass-error"]],
  ["quiet", ["quiet-start", "settings-error"]],
  ["ssids", ["ssids-text", "ssids-error"]],
  ["ackSsids", ["ack-ssids", "ack-ssids-error"]],
  ["retention", ["retention-max", "retention-error"]],
]);

export class Screens {
  /**
   * @param {object} page what app.mjs shares: `api`, `state`, `identity()`, `render()`, `features()`,
   *   `timeElement(ms)`, `safeItem(build, entry)`, `keyChanged(key)` (a rotated station key to use and keep)
   */
  constructor(page) {
    this.page = page;
    this.shown = "";
  }

  get state() {
    return this.page.state;
  }

  /** Whether this browser holds the station key (and so may read and change the settings). */
  owner() {
    return this.state.session?.claim === "mine";
  }

  call(name, fields = {}, options) {
    return this.page.api.call(name, { ...this.page.identity(), ...fields }, options);
  }

  setUp() {
    $("settings-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.saveSettings();
    });
    for (const button of document.querySelectorAll("[data-mute]")) {
      button.addEventListener("click", () => this.mute(button.dataset.mute));
    }
    for (const id of ["quiet-on", "ssids-exact", "ssids-all", "ssids-list", "retention-ring", "retention-pulled"]) {
      $(id).addEventListener("change", () => this.showDependentFields());
    }
    $("key-show").addEventListener("click", () => this.showKeyLink());
    $("key-copy").addEventListener("click", () => this.copyKeyLink());
    $("key-rotate").addEventListener("click", () => this.rotateKey());
    $("block-peer").addEventListener("click", () => this.blockPeer());
    $("export").addEventListener("click", () => this.exportStation());
    $("audit-load").addEventListener("click", () => this.loadAudit());
    $("sub-kind").addEventListener("change", () => this.showKindFields());
    $("subs-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.addSubscription();
    });
    $("forward-type").addEventListener("change", () => this.showForwardFields());
    $("forward-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.addForward();
    });
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible") this.keepZone();
    });
    setInterval(() => this.keepZone(), ZONE_CHECK_MS);
    this.showKindFields();
    this.showForwardFields();
  }

  /** After a sign-in: the owner's settings are read (and quiet hours moved to this browser's zone). */
  async signedIn() {
    this.state.settings = null;
    this.shown = "";
    $("settings-status").textContent = "";
    $("key-link-box").hidden = true;
    $("key-link").value = "";
    this.render();
    if (!this.owner()) return;
    try {
      this.take(await this.call("settings"));
      await this.keepZone();
    } catch (error) {
      $("settings-status").textContent = t("settings.loadFailed", { reason: error.message });
    }
  }

  /** Takes a `/v1/settings` answer: the form shows it, the lists follow. */
  take(answer) {
    this.state.settings = readSettings(answer);
    this.fillForm();
    this.shown = "";
    this.render();
  }

  /** Quiet hours stay at the same local times when the browser's zone or summer time changes. */
  async keepZone() {
    if (!this.owner() || !this.state.settings) return;
    const update = quietOffsetUpdate(this.state.settings, browserOffset());
    if (!update) return;
    try {
      this.take(await this.call("settings", update));
    } catch (error) {
      console.warn("quiet hours not moved to this zone:", error);
    }
  }

  /** Says everything again in the language just chosen. */
  retranslate() {
    this.shown = "";
    this.showForwardFields();
    this.render();
  }

  // -- rendering (on every change the page sees; the forms are filled only when settings arrive) ---------

  render() {
    if (!this.state.session) return;
    const owner = this.owner();
    const settings = this.state.settings;
    const claim = this.state.session.claim;
    const reason = claim === "other" || claim === "unclaimed" ? `settings.locked.${claim}` : "settings.locked.none";
    const locked = owner ? "" : t(claim === "provisional" ? "claim.provisional" : reason);
    for (const id of ["settings-locked", "subs-locked"]) {
      $(id).textContent = locked;
      $(id).hidden = owner;
    }
    const ready = owner && settings !== null;
    for (const id of ["mute-box", "settings-form", "key-box", "export-box", "audit-box", "subs-form"]) {
      $(id).hidden = !ready;
    }
    const types = forwardTypes(this.state.info);
    $("forward-box").hidden = !(ready && settings.forward !== null && types.length > 0);
    if (ready) this.offerForwardTypes(types);
    if (ready) this.renderMute();
    const { view, peer } = this.state.route;
    const blockable = ready && view === "conversation" && peer && !settings.blocked.includes(peer);
    $("block-peer").hidden = !blockable;
    if (blockable) $("block-peer").setAttribute("aria-label", t("conversation.blockWhat", { peer }));
    if (peer !== this.blockedShownFor) $("block-status").hidden = true;
    // Lists are made again only when what they show changed: a Remove button keeps its focus across syncs.
    const signature = JSON.stringify([settings, this.state.catches.entries.size, ready]);
    if (signature === this.shown) return;
    this.shown = signature;
    this.renderSubscriptions();
    this.renderCatches();
    this.renderForward();
  }

  renderMute() {
    const until = this.state.settings.mutedUntil;
    const muted = until > Date.now();
    $("mute-state").textContent = muted ? t("mute.until", { time: formatDate(until) }) : t("mute.notMuted");
    $("unmute").hidden = !muted;
    const offset = browserOffset();
    const sign = offset < 0 ? "−" : "+";
    const hours = Math.floor(Math.abs(offset) / 60);
    const minutes = Math.abs(offset) % 60;
    $("quiet-hint").textContent = t("quiet.zone", {
      zone: `UTC${sign}${hours}${minutes ? `:${String(minutes).padStart(2, "0")}` : ""}`,
    });
  }

  describe(subscription) {
    switch (subscription.kind) {
      case "bulletin":
        return t("subs.describe.bulletin", { match: subscription.match });
      case "group":
        return t("subs.describe.group", { call: subscription.call });
      case "nws":
        return t("subs.describe.nws", { zones: subscription.zones.join(", ") });
      default: {
        const parts = [];
        if (subscription.heardAfter) parts.push(t("subs.describe.heard", { hours: hours(subscription.heardAfter) }));
        if (subscription.silentFor) parts.push(t("subs.describe.silent", { hours: hours(subscription.silentFor) }));
        if (subscription.emergency) parts.push(t("subs.describe.emergency"));
        return t("subs.describe.watch", { call: subscription.call, what: parts.join(", ") });
      }
    }
  }

  renderSubscriptions() {
    const subscriptions = this.state.settings?.subscriptions ?? [];
    const items = subscriptions.map((subscription) =>
      this.page.safeItem(() => {
        const item = document.createElement("li");
        const text = document.createElement("span");
        text.className = "sub-text";
        const description = this.describe(subscription);
        const count = this.state.catches.list(subscription.id).length;
        text.textContent = `${description} · ${tn("subs.caught", count)}${subscription.bypass ? ` · ${t("subs.bypassOn")}` : ""}`;
        const remove = document.createElement("button");
        remove.type = "button";
        remove.className = "quiet";
        remove.textContent = t("remove");
        remove.setAttribute("aria-label", t("remove.what", { what: description }));
        remove.addEventListener("click", () => this.removeSubscription(subscription));
        item.append(text, remove);
        return item;
      }, subscription),
    );
    $("subs-list").replaceChildren(...items);
    $("subs-none").hidden = items.length > 0 || !this.owner();
  }

  renderCatches() {
    const byId = new Map((this.state.settings?.subscriptions ?? []).map((subscription) => [subscription.id, subscription]));
    const entries = this.state.catches.list().slice(0, 200);
    const items = entries.map((entry) =>
      this.page.safeItem(() => {
        const item = document.createElement("li");
        item.className = `catch ${entry.type}`;
        const head = document.createElement("p");
        head.className = "meta";
        const kind = document.createElement("span");
        kind.className = "kind";
        kind.textContent = entry.event ? t(`subs.event.${entry.event}`) : t(`subs.kind.${entry.type}`);
        const from = document.createElement("span");
        from.className = "peer";
        from.textContent = entry.to ? `${entry.peer} → ${entry.to}` : entry.peer;
        head.append(kind, " · ", from, " · ", this.page.timeElement(entry.timestamp));
        const text = document.createElement("p");
        text.className = "text";
        text.textContent = entry.text;
        item.append(head, text);
        const subscription = byId.get(entry.subscription);
        if (subscription) {
          const source = document.createElement("p");
          source.className = "hint";
          source.textContent = this.describe(subscription);
          item.append(source);
        }
        return item;
      }, entry),
    );
    $("catches").replaceChildren(...items);
    $("catches-none").hidden = items.length > 0;
  }

  renderForward() {
    const targets = this.state.settings?.forward ?? [];
    const items = targets.map((target) =>
      this.page.safeItem(() => {
        const item = document.createElement("li");
        item.className = "forward-target";
        const text = document.createElement("span");
        text.className = "sub-text";
        const status =
          target.status === "disabled"
            ? t("forward.status.disabled", {
                reason: target.reason ?? "?",
                since: target.disabledAt ? formatDate(target.disabledAt) : "?",
              })
            : t(`forward.status.${target.status}`);
        text.textContent = [
          `${t(`forward.${target.type}`)}: ${target.target}`,
          target.hint ? t("forward.hint.secret", { hint: target.hint }) : "",
          status,
          target.always ? t("forward.alwaysOn") : "",
        ]
          .filter(Boolean)
          .join(" · ");
        const description = `${t(`forward.${target.type}`)} ${target.target}`;
        const remove = document.createElement("button");
        remove.type = "button";
        remove.className = "quiet";
        remove.textContent = t("remove");
        remove.setAttribute("aria-label", t("remove.what", { what: description }));
        remove.addEventListener("click", () => this.saveForward(targets.filter((other) => other.id !== target.id)));
        item.append(text, remove);
        if (target.status === "unconfirmed") item.append(this.confirmForm(target));
        return item;
      }, target),
    );
    $("forward-list").replaceChildren(...items);
  }

  /** The code form of an email target waiting for its confirmation (FORWARD-API: POST /v1/forward/confirm). */
  confirmForm(target) {
    const form = document.createElement("form");
    form.className = "confirm";
    form.noValidate = true;
    const id = `confirm-${target.id}`;
    const label = document.createElement("label");
    label.htmlFor = id;
    label.textContent = t("forward.code", { to: target.target });
    const input = document.createElement("input");
    input.id = id;
    input.inputMode = "numeric";
    input.autocomplete = "one-time-code";
    const confirm = document.createElement("button");
    confirm.type = "submit";
    confirm.textContent = t("forward.confirm");
    const resend = document.createElement("button");
    resend.type = "button";
    resend.className = "quiet";
    resend.textContent = t("forward.resend");
    const status = document.createElement("p");
    status.className = "hint";
    status.setAttribute("role", "status");
    form.append(label, input, confirm, resend, status);
    const send = async (fields) => {
      try {
        await this.call("forward/confirm", { id: target.id, ...fields });
        status.textContent = fields.resend ? t("forward.resent") : t("forward.confirmed");
        if (!fields.resend) this.take(await this.call("settings"));
      } catch (error) {
        status.textContent = t("forward.failed", { reason: error.message });
      }
    };
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      send({ code: input.value.trim() });
    });
    resend.addEventListener("click", () => send({ resend: true }));
    return form;
  }

  // -- the settings form ------------------------------------------------------------------------------

  fillForm() {
    const settings = this.state.settings;
    if (!settings) return;
    $("blocked").value = settings.blocked.join("\n");
    $("bypass").value = settings.quietBypass.join("\n");
    $("quiet-on").checked = settings.quietHours !== null;
    if (settings.quietHours) {
      $("quiet-start").value = minutesToTime(settings.quietHours.start);
      $("quiet-end").value = minutesToTime(settings.quietHours.end);
    }
    $(`ack-${settings.ackPolicy}`).checked = true;
    $(`keyless-${settings.keylessDevices}`).checked = true;
    const mode = Array.isArray(settings.ssids) ? "list" : settings.ssids;
    $(`ssids-${mode}`).checked = true;
    $("ssids-text").value = Array.isArray(settings.ssids) ? settings.ssids.join(", ") : "";
    $("ack-ssids").value = settings.ackSsids.join(", ");
    $(settings.retention.mode === "untilPulled" ? "retention-pulled" : "retention-ring").checked = true;
    if (settings.retention.max) $("retention-max").value = String(settings.retention.max);
    this.showDependentFields();
  }

  showDependentFields() {
    const quiet = $("quiet-on").checked;
    $("quiet-start").disabled = !quiet;
    $("quiet-end").disabled = !quiet;
    $("ssids-text").disabled = !$("ssids-list").checked;
    $("retention-max").disabled = !$("retention-pulled").checked;
  }

  formValues() {
    const checked = (name) => document.querySelector(`input[name="${name}"]:checked`)?.value ?? "";
    return {
      blocked: $("blocked").value,
      quietBypass: $("bypass").value,
      quietOn: $("quiet-on").checked,
      quietStart: $("quiet-start").value,
      quietEnd: $("quiet-end").value,
      ackPolicy: checked("ack"),
      keylessDevices: checked("keyless"),
      ssidsMode: checked("ssids"),
      ssidsText: $("ssids-text").value,
      ackSsidsText: $("ack-ssids").value,
      retentionMode: checked("retention"),
      retentionMax: $("retention-max").value,
    };
  }

  async saveSettings() {
    for (const [field, error] of ERROR_FIELDS.values()) {
      $(error).textContent = "";
      $(field).removeAttribute("aria-invalid");
    }
    $("settings-status").textContent = "";
    const request = settingsRequest(this.formValues(), browserOffset());
    if (request.errors) {
      let first = null;
      for (const [name, message] of Object.entries(request.errors)) {
        const [field, error] = ERROR_FIELDS.get(name);
        $(error).textContent = message;
        $(field).setAttribute("aria-invalid", "true");
        first ??= $(field);
      }
      first?.focus();
      return;
    }
    const button = $("settings-save");
    button.disabled = true;
    try {
      this.take(await this.call("settings", request.fields));
      $("settings-status").textContent = t("settings.saved");
    } catch (error) {
      $("settings-error").textContent = t("settings.saveFailed", { reason: error.message });
    } finally {
      button.disabled = false;
    }
  }

  async mute(preset) {
    try {
      this.take(await this.call("settings", { mutedUntil: muteUntil(preset) }));
      $("settings-status").textContent =
        this.state.settings.mutedUntil > 0 ? t("mute.until", { time: formatDate(this.state.settings.mutedUntil) }) : t("mute.notMuted");
    } catch (error) {
      $("settings-status").textContent = t("settings.saveFailed", { reason: error.message });
    }
  }

  /** Blocks the peer of the conversation shown (setting `blocked`): its messages are dropped from now on. */
  async blockPeer() {
    const peer = this.state.route.peer;
    const settings = this.state.settings;
    if (!peer || !settings) return;
    const status = $("block-status");
    try {
      this.take(await this.call("settings", { blocked: [...settings.blocked, peer] }));
      status.textContent = t("conversation.blocked", { peer });
    } catch (error) {
      status.textContent = t("settings.saveFailed", { reason: error.message });
    }
    this.blockedShownFor = peer;
    status.hidden = false;
    $("conversation-title").focus();
  }

  // -- the key link -----------------------------------------------------------------------------------

  showKeyLink() {
    const key = this.page.api.stationKey;
    if (!key) return;
    const base = new URL(location.href);
    base.hash = "";
    $("key-link").value = keyLink(base.href, this.state.session.address, key);
    $("key-link-box").hidden = false;
    $("key-copied").textContent = "";
    $("key-link").focus();
    $("key-link").select();
  }

  async copyKeyLink() {
    try {
      await navigator.clipboard.writeText($("key-link").value);
      $("key-copied").textContent = t("key.copied");
    } catch {
      $("key-link").focus();
      $("key-link").select();
      $("key-copied").textContent = t("key.copyManually");
    }
  }

  /**
   * A new station key (`/v1/claim` with `rotate`): the old one stops working everywhere; this browser keeps the
   * new one (and, with "remember", stores it in place of the old).
   */
  async rotateKey() {
    const status = $("key-rotated");
    status.textContent = "";
    try {
      const answer = await this.call("claim", { rotate: true });
      if (!isStationKey(answer.stationKey)) throw new Error(t("status.noAnswer"));
      this.page.keyChanged(answer.stationKey);
      $("key-link-box").hidden = true;
      $("key-link").value = "";
      status.textContent = t("key.rotated");
    } catch (error) {
      status.textContent = t("key.rotateFailed", { reason: error.message });
    }
  }

  // -- export -------------------------------------------------------------------------------------------

  async exportStation() {
    const status = $("export-status");
    const button = $("export");
    button.disabled = true;
    status.textContent = t("export.working");
    try {
      const answer = await this.call("export", {}, { timeoutMs: 120000 });
      const date = new Date().toISOString().slice(0, 10);
      const file = `aprs-${this.state.session.address}-${date}.json`;
      const url = URL.createObjectURL(new Blob([JSON.stringify(answer, null, 2)], { type: "application/json" }));
      const link = document.createElement("a");
      link.href = url;
      link.download = file;
      link.hidden = true;
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60000);
      status.textContent = t("export.done", { file });
    } catch (error) {
      status.textContent = t("export.failed", { reason: error.message });
    } finally {
      button.disabled = false;
    }
  }

  // -- audit trail --------------------------------------------------------------------------------------

  /** Loads the station's audit trail (`POST /v1/audit`, the owner's) into its list, newest first. */
  async loadAudit() {
    const status = $("audit-status");
    const list = $("audit-list");
    status.textContent = t("audit.working");
    try {
      const entries = readAudit(await this.call("audit"));
      list.replaceChildren(
        ...entries.map((entry) => {
          const item = document.createElement("li");
          const time = document.createElement("time");
          time.dateTime = new Date(entry.at).toISOString();
          time.textContent = formatDate(entry.at);
          item.append(
            time,
            " ",
            t(`audit.action.${entry.action}`),
            entry.detail ? ` (${entry.detail})` : "",
            " ",
            t("audit.from", { client: entry.client }),
          );
          return item;
        }),
      );
      status.textContent = entries.length ? tn("audit.count", entries.length) : t("audit.empty");
    } catch (error) {
      status.textContent = t("audit.failed", { reason: error.message });
    }
  }

  // -- subscriptions ------------------------------------------------------------------------------------

  showKindFields() {
    const kind = $("sub-kind").value;
    for (const element of document.querySelectorAll("#subs-form [data-kind]")) element.hidden = element.dataset.kind !== kind;
  }

  async saveSubscriptions(list, announce) {
    $("subs-error").textContent = "";
    try {
      this.take(await this.call("settings", { subscriptions: list.map(subscriptionBody) }));
      $("announce").textContent = announce;
      return true;
    } catch (error) {
      $("subs-error").textContent = t("subs.failed", { reason: error.message });
      return false;
    }
  }

  async addSubscription() {
    const draft = subscriptionDraft({
      kind: $("sub-kind").value,
      match: $("sub-match").value,
      call: $("sub-kind").value === "watch" ? $("sub-watch").value : $("sub-group").value,
      zones: $("sub-zones").value,
      heardHours: $("sub-heard").value,
      silentHours: $("sub-silent").value,
      emergency: $("sub-emergency").checked,
      bypass: $("sub-bypass").checked,
    });
    const current = this.state.settings?.subscriptions ?? [];
    if (draft.error || current.length >= MAX_SUBSCRIPTIONS) {
      $("subs-error").textContent = draft.error ?? t("subs.tooMany", { max: MAX_SUBSCRIPTIONS });
      return;
    }
    if (await this.saveSubscriptions([...current, draft.subscription], t("subs.added", { what: this.describe(draft.subscription) }))) {
      for (const id of ["sub-group", "sub-zones", "sub-watch", "sub-heard", "sub-silent"]) $(id).value = "";
    }
  }

  async removeSubscription(subscription) {
    const current = this.state.settings?.subscriptions ?? [];
    await this.saveSubscriptions(
      current.filter((other) => other !== subscription),
      t("subs.removed", { what: this.describe(subscription) }),
    );
    $("subs-title").focus();
  }

  // -- forwarding ---------------------------------------------------------------------------------------

  /** Offers only the target types this server takes (/v1/info `forward`: no email without its SMTP server). */
  offerForwardTypes(types) {
    const select = $("forward-type");
    for (const option of select.options) option.hidden = option.disabled = !types.includes(option.value);
    if (types.length > 0 && !types.includes(select.value)) {
      select.value = types[0];
      this.showForwardFields();
    }
  }

  showForwardFields() {
    const type = $("forward-type").value;
    $("forward-target-label").textContent = t(`forward.target.${type}`);
    $("forward-target").inputMode = type === "email" ? "email" : "url";
    $("forward-secret-field").hidden = type === "email";
    $("forward-secret-label").textContent = t(type === "ntfy" ? "forward.token" : "forward.secret");
  }

  async saveForward(targets) {
    $("forward-error").textContent = "";
    try {
      // Kept targets go back by `id` only (their secrets stay on the server), with their `always`.
      const list = targets.map((target) => (target.id ? { id: target.id, always: target.always } : target));
      this.take(await this.call("settings", { forward: list }));
      return true;
    } catch (error) {
      $("forward-error").textContent = t("forward.failed", { reason: error.message });
      return false;
    }
  }

  async addForward() {
    const current = this.state.settings?.forward ?? [];
    const draft = forwardDraft({
      type: $("forward-type").value,
      target: $("forward-target").value,
      secret: $("forward-secret").value,
      always: $("forward-always").checked,
    });
    if (draft.error || current.length >= MAX_FORWARD) {
      $("forward-error").textContent = draft.error ?? t("forward.tooMany", { max: MAX_FORWARD });
      return;
    }
    if (await this.saveForward([...current, draft.target])) {
      $("forward-target").value = "";
      $("forward-secret").value = "";
      $("announce").textContent = t("forward.added");
    }
  }
}

/** Seconds as hours, as a person writes them (1.5, 24). */
function hours(seconds) {
  return String(Math.round((seconds / 3600) * 100) / 100);
}
