// Sign in: callsign, SSID and passcode, or a station key carried over from the device that claimed the station
// (typed, or filled in from a key link `#key=N0CALL-7:<key>`), "remember me", and the language. The sign-in
// itself (register, claim, what is kept) is session.mjs.

import { $ } from "../dom.mjs";
import { fillLanguageSelect, t } from "../i18n.mjs";
import { isStationKey, parseIdentity, parsePasscode } from "../rules.mjs";
import { remembered } from "../session.mjs";
import { Screen } from "./screen.mjs";

export class SignInScreen extends Screen {
  constructor(context) {
    super(context);
    const ssid = $("ssid");
    for (let value = 0; value <= 15; value += 1) {
      const option = document.createElement("option");
      option.value = String(value);
      option.textContent = String(value);
      ssid.append(option);
    }
    // The station "remember me" kept, for the form shown when its automatic sign-in fails or after a sign-out.
    const saved = remembered();
    if (saved) {
      $("callsign").value = saved.callsign;
      ssid.value = String(saved.ssid);
      $("remember").checked = true;
    }
    $("language-start").addEventListener("change", () => this.actions.changeLanguage($("language-start").value));
    $("sign-in-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.submit();
    });
  }

  /**
   * @param {{message?: string, focus?: boolean, keyLink?: {callsign: string, ssid: number, key: string}}} params
   *   `message`: why the page is signed out (a failed sign-in, a refused passcode); `keyLink`: a key link's
   *   station and key, filled in with "remember" ticked so that one press of "Sign in" keeps it on this device.
   */
  show({ message = "", focus = false, keyLink = null } = {}) {
    $("sign-in-view").hidden = false;
    $("sign-in-button").disabled = false;
    $("sign-in-error").textContent = message;
    if (keyLink) {
      $("callsign").value = keyLink.callsign;
      $("ssid").value = String(keyLink.ssid);
      $("station-key").value = keyLink.key;
      $("station-key-box").open = true;
      $("remember").checked = true;
      const notice = $("key-link-notice");
      const station = keyLink.ssid === 0 ? keyLink.callsign : `${keyLink.callsign}-${keyLink.ssid}`;
      notice.textContent = t("keyLink.notice", { station });
      notice.hidden = false;
      $("sign-in-button").focus();
    } else if (focus) {
      $("callsign").focus();
    }
  }

  hide() {
    $("sign-in-view").hidden = true;
    $("passcode").value = "";
    $("key-link-notice").hidden = true;
  }

  retranslate() {
    fillLanguageSelect($("language-start"));
    $("ssid").options[0].textContent = t("signIn.ssidNone");
  }

  async submit() {
    const station = parseIdentity($("callsign").value, $("ssid").value);
    const stationKey = $("station-key").value.trim();
    // With a station key the passcode may stay empty.
    const passcode = stationKey && $("passcode").value.trim() === "" ? { passcode: undefined } : parsePasscode($("passcode").value);
    const problem = station.error ?? passcode.error ?? (stationKey && !isStationKey(stationKey) ? t("signIn.keyFormat") : undefined);
    if (problem) {
      $("sign-in-error").textContent = problem;
      (station.error ? $("callsign") : $("passcode")).focus();
      return;
    }
    $("callsign").value = station.callsign;
    $("ssid").value = String(station.ssid);
    const button = $("sign-in-button");
    button.disabled = true;
    $("sign-in-error").textContent = "";
    const signingIn = this.actions.signIn({
      callsign: station.callsign,
      ssid: station.ssid,
      auth: passcode.passcode,
      stationKey: stationKey || null,
      remember: $("remember").checked,
    });
    $("station-key").value = "";
    await signingIn;
    button.disabled = false;
  }
}
