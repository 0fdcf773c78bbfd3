// The inbox (#/): conversations by peer, the newest first, with avatars and unread counts, "Mark all read",
// how many messages the server dropped before the page fetched them, and the notifications switch.

import { $, announce, safeItem, timeElement } from "../dom.mjs";
import { language, t, tn } from "../i18n.mjs";
import { pushSupport } from "../push.mjs";
import { Screen } from "./screen.mjs";

export class InboxScreen extends Screen {
  constructor(context) {
    super(context);
    /** What the notifications box last said it for: it is drawn again only when that changed. */
    this.notifyFor = null;
    $("read-all").addEventListener("click", () => this.markAllRead());
    $("enable-notifications").addEventListener("click", () => this.enableNotifications());
    $("disable-notifications").addEventListener("click", () => this.disableNotifications());
  }

  show({ previous, focus }) {
    // Back from a conversation: the focus goes to its entry in the list.
    if (focus && previous?.peer) document.querySelector(`.conversation-link[data-peer="${CSS.escape(previous.peer)}"]`)?.focus();
  }

  update() {
    const { inbox, dropped } = this.state;
    const list = $("conversations");
    const focused = list.contains(document.activeElement) ? document.activeElement.getAttribute("href") : null;
    const conversations = inbox.conversations();
    const items = conversations.map((conversation) => safeItem(() => this.conversationItem(conversation), conversation));
    list.replaceChildren(...items);
    $("empty-inbox").hidden = conversations.length > 0;
    $("read-all").hidden = inbox.totalUnread() === 0;
    $("dropped").hidden = dropped === 0;
    $("dropped").textContent = dropped > 0 ? tn("inbox.dropped", dropped) : "";
    if (focused) list.querySelector(`a[href="${CSS.escape(focused)}"]`)?.focus();
    this.renderNotify();
  }

  retranslate() {
    this.notifyFor = null;
  }

  conversationItem({ peer, last, unread }) {
    const item = document.createElement("li");
    const link = document.createElement("a");
    link.className = "conversation-link";
    link.href = `#/c/${encodeURIComponent(peer)}`;
    link.dataset.peer = peer;
    const route = this.state.route;
    if (route.view === "conversation" && route.peer === peer) link.setAttribute("aria-current", "true");
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
    link.append(this.state.avatars.element(peer), body);
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

  markAllRead() {
    const upTo = this.state.inbox.markAllRead();
    if (upTo > 0) this.actions.postRead("*", upTo);
    this.actions.render();
    announce(t("inbox.allRead"));
  }

  // -- notifications ----------------------------------------------------------------------------------

  /**
   * The notifications box, drawn again only for a new session, a switch on or off, or another language: what
   * it says after a failure stays until then.
   */
  renderNotify() {
    const { session, pushOn, info } = this.state;
    const now = { session, pushOn, language: language() };
    const last = this.notifyFor;
    if (last && last.session === now.session && last.pushOn === now.pushOn && last.language === now.language) return;
    this.notifyFor = now;
    const enable = $("enable-notifications");
    const disable = $("disable-notifications");
    const status = $("notify-status");
    const support = pushSupport(info);
    disable.hidden = true;
    enable.hidden = false;
    if (!support.ok) {
      enable.disabled = true;
      status.textContent = support.reason;
      return;
    }
    if (pushOn) {
      enable.hidden = true;
      disable.hidden = false;
      status.textContent = t("notify.on", { address: session.address });
      return;
    }
    enable.disabled = false;
    status.textContent = t("notify.offer");
  }

  async enableNotifications() {
    if (!pushSupport(this.state.info).ok || !this.state.session) return;
    const status = $("notify-status");
    const button = $("enable-notifications");
    button.disabled = true;
    status.textContent = t("notify.turningOn");
    try {
      await this.actions.enableNotifications();
      $("disable-notifications").focus();
    } catch (error) {
      button.disabled = false;
      status.textContent = t("notify.failed", { reason: error.message });
    }
  }

  async disableNotifications() {
    try {
      await this.actions.disableNotifications();
      $("enable-notifications").focus();
    } catch (error) {
      $("notify-status").textContent = t("notify.stillOn", { reason: error.message });
    }
  }
}
