// The top bar over the signed-in screens: the station signed in, its claim (and the form that proves a
// provisional one), the connection's status, "Sign out", and the tabs. Not a screen of its own but shown with
// each of them, it follows the same interface (screen.mjs). The connection line also speaks while signing in.

import { APIError } from "../api.mjs";
import { $ } from "../dom.mjs";
import { t } from "../i18n.mjs";
import { Screen } from "./screen.mjs";

/** Each tab and the route views it stands for. */
const TABS = [
  ["tab-inbox", ["inbox", "conversation", "new"]],
  ["tab-subs", ["subs"]],
  ["tab-settings", ["settings"]],
];

export class TopBarScreen extends Screen {
  constructor(context) {
    super(context);
    $("sign-out").addEventListener("click", () => this.actions.signOut());
    $("claim-proof").addEventListener("submit", (event) => {
      event.preventDefault();
      this.prove();
    });
  }

  show() {
    for (const id of ["station", "sign-out", "tabs"]) $(id).hidden = false;
  }

  hide() {
    for (const id of ["station", "sign-out", "tabs"]) $(id).hidden = true;
  }

  update() {
    const session = this.state.session;
    if (session) $("station").textContent = t("station.signedIn", { address: session.address });
    const line = $("claim-status");
    const claim = session?.claim ?? "none";
    line.dataset.claim = claim;
    line.textContent = claim === "none" ? "" : t(`claim.${claim}`);
    line.hidden = claim === "none";
    $("claim-proof").hidden = claim !== "provisional";
    this.showConnection(this.state.status);
    const view = this.state.route.view;
    for (const [tab, views] of TABS) {
      if (session && views.includes(view)) $(tab).setAttribute("aria-current", "page");
      else $(tab).removeAttribute("aria-current");
    }
  }

  /** The connection's status: signing in, or the live loop's (live.mjs `onStatus`); null: nothing to say. */
  showConnection(status) {
    const line = $("connection");
    if (!status) {
      line.textContent = "";
      return;
    }
    const { mode, error, retryMs } = status;
    if (mode === "signingIn") {
      line.textContent = t("status.signingIn");
      return;
    }
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
      default:
        line.textContent = "";
    }
  }

  /** Proves a provisional claim with the code pushed to one of the station's other devices. */
  async prove() {
    if (this.state.session?.claim !== "provisional") return;
    $("claim-proof-error").textContent = "";
    try {
      await this.actions.proveClaim($("claim-code").value.trim());
      $("claim-code").value = "";
    } catch (error) {
      $("claim-proof-error").textContent = t("claim.proofFailed", {
        reason: error instanceof APIError ? error.message : String(error),
      });
    }
  }
}
