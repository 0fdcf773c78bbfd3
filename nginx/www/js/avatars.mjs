// Peers' avatars (docs/protocol.md, "Avatars"): a sync names each peer's avatar hash; `icon:<name>` is a
// built-in icon and needs no request, any other hash is an image fetched once through /v1/avatars (at
// most 50 stations a call) and kept while the hash stays the same. Without one: the call's initials
// on a colour of its own.

import { hue, initials } from "./rules.mjs";

const SVG = "http://www.w3.org/2000/svg";

/** Line drawings (24×24, stroked) for the built-in icon names the apps use most. A Map, never a plain object:
 * an icon name comes from the network, and `constructor` or `__proto__` must find nothing. */
const ICONS = new Map(Object.entries({
  radio: ["M9 2v6", "M7 8h10a1 1 0 0 1 1 1v12a1 1 0 0 1-1 1H7a1 1 0 0 1-1-1V9a1 1 0 0 1 1-1z", "M9 11h6v3H9z", "M9 17h6", "M9 19.5h6"],
  mail: ["M3 6h18v12H3z", "M3 6l9 7 9-7"],
  home: ["M3 11l9-8 9 8", "M5 9.5V21h14V9.5", "M10 21v-6h4v6"],
  car: ["M3 17v-5l2.5-5h13L21 12v5z", "M3 12h18", "M6.5 17v2.5", "M17.5 17v2.5", "M7 14.5h1", "M16 14.5h1"],
  antenna: ["M12 9v13", "M12 9l-5 13", "M12 9l5 13", "M8.5 5.5a5 5 0 0 1 7 0", "M5.5 2.5a9 9 0 0 1 13 0"],
  tower: ["M12 9v13", "M12 9l-5 13", "M12 9l5 13", "M8.5 5.5a5 5 0 0 1 7 0", "M5.5 2.5a9 9 0 0 1 13 0"],
  person: ["M12 12a4 4 0 1 0 0-8 4 4 0 0 0 0 8z", "M4 21a8 8 0 0 1 16 0"],
  star: ["M12 3l2.7 5.6 6.1.8-4.5 4.2 1.1 6.1L12 16.8 6.6 19.7l1.1-6.1L3.2 9.4l6.1-.8z"],
  heart: ["M12 20s-7-4.4-7-10a4 4 0 0 1 7-2.6A4 4 0 0 1 19 10c0 5.6-7 10-7 10z"],
  boat: ["M4 15h16l-2 5H6z", "M12 3v12", "M12 4l6 9h-6"],
  plane: ["M2 13l20-8-6 16-4-6z", "M12 15l10-10"],
  bike: ["M6 18a3 3 0 1 0 0-.01", "M18 18a3 3 0 1 0 0-.01", "M6 18l4-8h6l2 8", "M10 10l-1-3H7"],
  globe: ["M12 21a9 9 0 1 0 0-18 9 9 0 0 0 0 18z", "M3 12h18", "M12 3c3 3 3 15 0 18", "M12 3c-3 3-3 15 0 18"],
}));

/** The icon names drawn here. */
export const ICON_NAMES = [...ICONS.keys()];

/** What the server stores as an icon name (docs/protocol.md "Avatars"); anything else is not an icon. */
const ICON_NAME = /^[a-z0-9_-]{1,32}$/;
/** A hash as the server writes it: "", "icon:<name>" or 64 hex digits. */
const HASH = /^(?:|icon:[a-z0-9_-]{1,32}|[0-9a-f]{64})$/;
/** Base64 of a PNG within the protocol's 24000 characters. */
const IMAGE = /^[A-Za-z0-9+/]{1,24000}={0,2}$/;

export class Avatars {
  /** @param {(stations: string[]) => Promise<object>} fetchAvatars one `/v1/avatars` call */
  constructor(fetchAvatars) {
    this.fetchAvatars = fetchAvatars;
    /** peer → {hash, icon, image} */
    this.known = new Map();
    /** peer → hash a sync named that is not fetched yet */
    this.wanted = new Map();
    this.busy = false;
  }

  /** Takes a sync's `avatars` map; returns true when something shown changes without a fetch. */
  note(map) {
    let changed = false;
    if (!map || typeof map !== "object" || Array.isArray(map)) return changed;
    for (const [peer, hash] of Object.entries(map)) {
      if (typeof hash !== "string" || !HASH.test(hash) || peer.length > 16) continue;
      const current = this.known.get(peer);
      if (current?.hash === hash) continue;
      if (hash === "") {
        this.known.delete(peer);
        changed = true;
      } else if (hash.startsWith("icon:")) {
        this.known.set(peer, { hash, icon: hash.slice(5), image: null });
        changed = true;
      } else {
        this.wanted.set(peer, hash);
      }
    }
    return changed;
  }

  /** Fetches the wanted images (50 at a time); resolves true when any arrived. */
  async fetchWanted() {
    if (this.busy || this.wanted.size === 0) return false;
    this.busy = true;
    let changed = false;
    try {
      while (this.wanted.size > 0) {
        const batch = [...this.wanted.keys()].slice(0, 50);
        for (const peer of batch) this.wanted.delete(peer);
        const answer = await this.fetchAvatars(batch);
        const avatars = answer?.avatars && typeof answer.avatars === "object" ? answer.avatars : {};
        for (const peer of batch) {
          // Own keys only: a peer named `constructor` must not find Object's.
          const avatar = Object.hasOwn(avatars, peer) ? avatars[peer] : null;
          if (!avatar || typeof avatar !== "object" || typeof avatar.hash !== "string") continue;
          const image = typeof avatar.image === "string" && IMAGE.test(avatar.image) ? avatar.image : null;
          const icon = typeof avatar.icon === "string" && ICON_NAME.test(avatar.icon) ? avatar.icon : null;
          this.known.set(peer, { hash: avatar.hash, icon, image });
          changed = true;
        }
      }
    } catch {
      // Avatars are decoration: a failed fetch leaves initials until the next sync names them again.
    } finally {
      this.busy = false;
    }
    return changed;
  }

  /** An element showing `peer`'s avatar (decorative: the call is always written beside it). */
  element(peer) {
    const avatar = this.known.get(peer);
    const box = document.createElement("span");
    box.className = "avatar";
    box.setAttribute("aria-hidden", "true");
    box.style.setProperty("--avatar-hue", String(hue(peer)));
    if (avatar?.image) {
      const image = document.createElement("img");
      image.alt = "";
      image.decoding = "async";
      image.src = `data:image/png;base64,${avatar.image}`;
      box.classList.add("avatar-image");
      box.append(image);
      return box;
    }
    const paths = avatar?.icon ? ICONS.get(avatar.icon) : undefined;
    if (paths) {
      const svg = document.createElementNS(SVG, "svg");
      svg.setAttribute("viewBox", "0 0 24 24");
      svg.setAttribute("focusable", "false");
      for (const d of paths) {
        const path = document.createElementNS(SVG, "path");
        path.setAttribute("d", d);
        svg.append(path);
      }
      box.classList.add("avatar-icon");
      box.dataset.icon = avatar.icon;
      box.append(svg);
      return box;
    }
    box.textContent = initials(peer);
    return box;
  }
}
