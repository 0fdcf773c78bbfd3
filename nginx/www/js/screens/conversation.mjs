// A conversation (#/c/PEER) and a new message (#/new): the messages with one peer in order, a sent one with its
// state as a word, "Block", and the send form with the 67-character count and the characters APRS forbids
// shown while typing. Showing a conversation marks it read (on every device of the station). The send itself
// (clientId, retries) is sending.mjs.

import { $, clearFieldError, safeItem, timeElement } from "../dom.mjs";
import { t } from "../i18n.mjs";
import { MAX_TEXT, checkText, parseStation, stateWord } from "../rules.mjs";
import { Screen } from "./screen.mjs";

export class ConversationScreen extends Screen {
  constructor(context) {
    super(context);
    $("send-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.send();
    });
    $("message").addEventListener("input", () => this.showTextCheck());
    $("message").addEventListener("keydown", (event) => {
      // APRS messages are one line: Enter sends, and no key adds a line break.
      if (event.key === "Enter" && !event.isComposing) {
        event.preventDefault();
        $("send-form").requestSubmit();
      }
    });
    $("to").addEventListener("input", () => clearFieldError("to"));
    $("block-peer").addEventListener("click", () => this.blockPeer());
  }

  show({ view, peer, previous, focus }) {
    if (view === "conversation" && peer !== previous.peer) {
      $("to").value = peer;
      clearFieldError("to");
    } else if (view === "new" && previous.view !== "new") {
      $("to").value = "";
    }
    if (!focus) return;
    if (view === "new") $("to").focus();
    else $("conversation-title").focus();
  }

  update() {
    const { inbox, route } = this.state;
    const { view, peer } = route;
    const showing = view === "conversation" && peer;
    if (showing && document.visibilityState === "visible") {
      const upTo = inbox.markRead(peer);
      if (upTo > 0) this.actions.postRead(peer, upTo);
    }
    const title = $("conversation-title");
    const list = $("messages");
    title.textContent = showing ? peer : view === "new" ? t("inbox.new") : t("conversation.choose");
    $("conversation-avatar").replaceChildren(...(showing ? [this.state.avatars.element(peer)] : []));
    const nearBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 80;
    const entries = showing ? inbox.conversation(peer) : [];
    const items = entries.map((entry) => safeItem(() => this.messageItem(entry), entry));
    list.replaceChildren(...items);
    list.hidden = !showing;
    $("conversation-empty").hidden = Boolean(showing) || view === "new";
    $("conversation-empty").textContent =
      showing || inbox.conversations().length > 0 ? t("conversation.pick") : t("conversation.none");
    if (nearBottom || items.length < 4) list.scrollTop = list.scrollHeight;
    this.renderBlock();
    this.renderSendForm();
  }

  retranslate() {
    this.showTextCheck();
  }

  messageItem(entry) {
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
    if (entry.to && entry.to !== this.state.session.address) meta.append(" · ", t("message.to", { to: entry.to }));
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

  // -- blocking the peer (setting `blocked`; the station key's holder only) --------------------------------

  renderBlock() {
    const settings = this.state.settings;
    const { view, peer } = this.state.route;
    const blockable = this.context.owner() && settings !== null && view === "conversation" && peer && !settings.blocked.includes(peer);
    $("block-peer").hidden = !blockable;
    if (blockable) $("block-peer").setAttribute("aria-label", t("conversation.blockWhat", { peer }));
    if (peer !== this.blockedShownFor) $("block-status").hidden = true;
  }

  /** Blocks the peer of the conversation shown: its messages are dropped from now on. */
  async blockPeer() {
    const peer = this.state.route.peer;
    const settings = this.state.settings;
    if (!peer || !settings) return;
    const status = $("block-status");
    try {
      await this.actions.updateSettings({ blocked: [...settings.blocked, peer] });
      status.textContent = t("conversation.blocked", { peer });
    } catch (error) {
      status.textContent = t("settings.saveFailed", { reason: error.message });
    }
    this.blockedShownFor = peer;
    status.hidden = false;
    $("conversation-title").focus();
  }

  // -- sending ---------------------------------------------------------------------------------------------

  renderSendForm() {
    const { send } = this.state;
    const claim = this.state.session?.claim;
    const unavailable = send === "no" || claim === "other" || claim === "unclaimed" || claim === "provisional";
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

  showTextCheck() {
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

  async send() {
    if (!this.state.session || this.state.send === "no") return;
    $("send-status").textContent = "";
    const to = parseStation($("to").value);
    // Radios drop spaces at the end of a message (so the server refuses them): they go before sending.
    const text = $("message").value.replace(/ +$/, "");
    const errors = this.showTextCheck();
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
    const button = $("send-button");
    button.disabled = true;
    button.textContent = t("send.sending");
    try {
      await this.actions.send(to.address, text);
      $("message").value = "";
      this.showTextCheck();
      if (this.state.route.peer !== to.address) location.hash = `#/c/${encodeURIComponent(to.address)}`;
      else this.actions.render();
      $("message").focus();
    } catch (error) {
      $("send-status").textContent = t("send.failed", { reason: error.message });
    } finally {
      button.disabled = false;
      button.textContent = t("send.button");
    }
  }
}
