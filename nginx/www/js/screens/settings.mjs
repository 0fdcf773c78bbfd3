// Settings (#/settings): the language; for the station key's holder, mute presets, the settings form (quiet
// hours in the browser's zone, blocked calls, the ACK policy, other SSIDs, keeping messages, devices without the
// key), the key link for another device and a new key, export, forwarding targets and who changed what. Without
// the key the screen says why and offers only the language. The rules and checks are settings.mjs; reading and
// changing the settings is station.mjs.

import { $, announce, safeItem } from "../dom.mjs";
import { fillLanguageSelect, formatDate, language, t, tn } from "../i18n.mjs";
import { isStationKey } from "../rules.mjs";
import {
  MAX_FORWARD,
  browserOffset,
  forwardDraft,
  forwardTypes,
  keyLink,
  minutesToTime,
  muteUntil,
  readAudit,
  settingsRequest,
} from "../settings.mjs";
import { lockedReason } from "../station.mjs";
import { Screen } from "./screen.mjs";

/** The form fields whose errors `settingsRequest` names, and where each is shown. */
const ERROR_FIELDS = new Map([
  ["blocked", ["blocked", "blocked-error"]],
  ["bypass", ["bypass", "bypass-error"]],
  ["quiet", ["quiet-start", "settings-error"]],
  ["ssids", ["ssids-text", "ssids-error"]],
  ["ackSsids", ["ack-ssids", "ack-ssids-error"]],
  ["retention", ["retention-max", "retention-error"]],
]);

export class SettingsScreen extends Screen {
  constructor(context) {
    super(context);
    this.shown = "";
    $("language").addEventListener("change", () => this.actions.changeLanguage($("language").value));
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
    $("export").addEventListener("click", () => this.exportStation());
    $("audit-load").addEventListener("click", () => this.loadAudit());
    $("forward-type").addEventListener("change", () => this.showForwardFields());
    $("forward-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.addForward();
    });
    this.showForwardFields();
  }

  show({ focus }) {
    if (focus) $("settings-title").focus();
  }

  update() {
    const { session, settings, settingsError } = this.state;
    if (session !== this.session) {
      // Another station (or the same one signed in again): nothing said or shown for the last stays.
      this.session = session;
      this.errorShown = "";
      $("settings-status").textContent = "";
      $("key-link-box").hidden = true;
      $("key-link").value = "";
    }
    if (settingsError !== this.errorShown) {
      this.errorShown = settingsError;
      if (settingsError) $("settings-status").textContent = settingsError;
    }
    // The form is filled when settings arrive, never while the user types into it.
    if (settings && settings !== this.filled) {
      this.filled = settings;
      this.fillForm();
    }
    const owner = this.context.owner();
    $("settings-locked").textContent = lockedReason(this.context);
    $("settings-locked").hidden = owner;
    const ready = owner && settings !== null;
    for (const id of ["mute-box", "settings-form", "key-box", "export-box", "audit-box"]) $(id).hidden = !ready;
    const types = forwardTypes(this.state.info);
    $("forward-box").hidden = !(ready && settings.forward !== null && types.length > 0);
    if (!ready) return;
    this.offerForwardTypes(types);
    this.renderMute();
    // The list is made again only when what it shows changed: a Remove button keeps its focus across syncs.
    const signature = JSON.stringify([settings.forward, language()]);
    if (signature === this.shown && settings === this.shownSettings) return;
    this.shown = signature;
    this.shownSettings = settings;
    this.renderForward();
  }

  retranslate() {
    fillLanguageSelect($("language"));
    this.showForwardFields();
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

  // -- the settings form ------------------------------------------------------------------------------

  fillForm() {
    const settings = this.state.settings;
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
      await this.actions.updateSettings(request.fields);
      $("settings-status").textContent = t("settings.saved");
    } catch (error) {
      $("settings-error").textContent = t("settings.saveFailed", { reason: error.message });
    } finally {
      button.disabled = false;
    }
  }

  async mute(preset) {
    try {
      const settings = await this.actions.updateSettings({ mutedUntil: muteUntil(preset) });
      $("settings-status").textContent =
        settings.mutedUntil > 0 ? t("mute.until", { time: formatDate(settings.mutedUntil) }) : t("mute.notMuted");
    } catch (error) {
      $("settings-status").textContent = t("settings.saveFailed", { reason: error.message });
    }
  }

  // -- the key link -----------------------------------------------------------------------------------

  showKeyLink() {
    const key = this.context.api.stationKey;
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
      const answer = await this.context.call("claim", { rotate: true });
      if (!isStationKey(answer.stationKey)) throw new Error(t("status.noAnswer"));
      this.actions.keyChanged(answer.stationKey);
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
      const answer = await this.context.call("export", {}, { timeoutMs: 120000 });
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
      const entries = readAudit(await this.context.call("audit"));
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

  renderForward() {
    const targets = this.state.settings?.forward ?? [];
    const items = targets.map((target) =>
      safeItem(() => {
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
        await this.context.call("forward/confirm", { id: target.id, ...fields });
        status.textContent = fields.resend ? t("forward.resent") : t("forward.confirmed");
        if (!fields.resend) await this.actions.updateSettings();
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

  async saveForward(targets) {
    $("forward-error").textContent = "";
    try {
      // Kept targets go back by `id` only (their secrets stay on the server), with their `always`.
      const list = targets.map((target) => (target.id ? { id: target.id, always: target.always } : target));
      await this.actions.updateSettings({ forward: list });
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
      announce(t("forward.added"));
    }
  }
}
