// Subscriptions (#/subs): bulletins, groups, NWS zones and watched stations, each with what it caught and a way
// to remove it, the form that adds one, and what arrived, newest first, apart from messages. Changing them needs
// the station key; without it the screen says why and shows only what arrived.

import { $, announce, safeItem, timeElement } from "../dom.mjs";
import { language, t, tn } from "../i18n.mjs";
import { MAX_SUBSCRIPTIONS, subscriptionBody, subscriptionDraft } from "../settings.mjs";
import { lockedReason } from "../station.mjs";
import { Screen } from "./screen.mjs";

export class SubscriptionsScreen extends Screen {
  constructor(context) {
    super(context);
    this.shown = "";
    $("sub-kind").addEventListener("change", () => this.showKindFields());
    $("subs-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.addSubscription();
    });
    this.showKindFields();
  }

  show({ focus }) {
    if (focus) $("subs-title").focus();
  }

  update() {
    const owner = this.context.owner();
    const settings = this.state.settings;
    $("subs-locked").textContent = lockedReason(this.context);
    $("subs-locked").hidden = owner;
    const ready = owner && settings !== null;
    $("subs-form").hidden = !ready;
    // Lists are made again only when what they show changed: a Remove button keeps its focus across syncs.
    const signature = JSON.stringify([settings?.subscriptions, this.state.catches.entries.size, ready, language()]);
    if (signature === this.shown && settings === this.shownSettings) return;
    this.shown = signature;
    this.shownSettings = settings;
    this.renderSubscriptions();
    this.renderCatches();
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
      safeItem(() => {
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
    $("subs-none").hidden = items.length > 0 || !this.context.owner();
  }

  renderCatches() {
    const byId = new Map((this.state.settings?.subscriptions ?? []).map((subscription) => [subscription.id, subscription]));
    const entries = this.state.catches.list().slice(0, 200);
    const items = entries.map((entry) =>
      safeItem(() => {
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
        head.append(kind, " · ", from, " · ", timeElement(entry.timestamp));
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

  showKindFields() {
    const kind = $("sub-kind").value;
    for (const element of document.querySelectorAll("#subs-form [data-kind]")) element.hidden = element.dataset.kind !== kind;
  }

  async saveSubscriptions(list, said) {
    $("subs-error").textContent = "";
    try {
      await this.actions.updateSettings({ subscriptions: list.map(subscriptionBody) });
      announce(said);
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
}

/** Seconds as hours, as a person writes them (1.5, 24). */
function hours(seconds) {
  return String(Math.round((seconds / 3600) * 100) / 100);
}
