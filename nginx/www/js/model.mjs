// The inbox as data: messages from register/sync/send answers merged into conversations by peer, with
// unread counts, read markers and the sync cursor. Pure (no DOM, no storage, no clock): kept in memory only
// (never in the browser's storage; a reload fetches the history again), and the Node tests drive it directly.
//
// Keys (docs/protocol.md, "Messages" and "Sending messages"):
// - a received message is one `timestamp` (identical on every sync; unique across the database);
// - a sent message is its `clientId` when it has one, else `peer` + `seqId` (its message number), else
//   its timestamp; a state change comes back with a new timestamp and replaces the state of the same
//   entry, which keeps its place in the conversation (the time it was first seen).

/** Entries kept at most (the server keeps 50 per station; this bounds what a browser stores). */
export const MAX_ENTRIES = 1000;

/** How far ahead of this device's clock a server's time may be, ms (a year: clocks are wrong, not that wrong). */
export const MAX_CLOCK_AHEAD_MS = 366 * 24 * 3600 * 1000;

const FINAL_STATES = new Set(["acked", "rejected", "expired", "cancelled"]);

export class Inbox {
  constructor() {
    /** @type {Map<string, Entry>} key → entry */
    this.entries = new Map();
    /** peer → the `order` of the newest received message the user has seen */
    this.lastRead = new Map();
    /** Everything up to this `order` is read (a read marker for every peer, `"*"`). */
    this.readAll = 0;
    /** The sync cursor: epoch ms, only ever moves forward. */
    this.cursor = 0;
    this.sequence = 0;
  }

  /**
   * Moves the cursor to `serverTime` if that is newer (a JSON integer, epoch ms). A time more than a year past
   * `now` is no server's clock: taken, it would hide every message to come, so it is ignored.
   */
  advance(serverTime, now = Date.now()) {
    if (!Number.isSafeInteger(serverTime) || serverTime > now + MAX_CLOCK_AHEAD_MS) return;
    if (serverTime > this.cursor) this.cursor = serverTime;
  }

  /**
   * Merges `messages` (an answer's array, oldest first). Entries that are not a well-formed
   * `"message"` are skipped. Returns `{received, changed}`: the received messages new to the inbox
   * (for notifications and counts), and whether anything shown changed.
   */
  merge(messages) {
    const received = [];
    let changed = false;
    if (!Array.isArray(messages)) return { received, changed };
    for (const raw of messages) {
      const message = normalise(raw);
      if (!message) continue;
      if (message.direction === "received") {
        const key = `r:${message.timestamp}`;
        if (this.entries.has(key)) continue;
        const entry = { key, ...message, order: message.timestamp, sequence: this.sequence++ };
        this.entries.set(key, entry);
        received.push(entry);
        changed = true;
        continue;
      }
      const existing = this.findSent(message);
      if (existing) {
        if (existing.state !== message.state || existing.timestamp !== message.timestamp) {
          existing.state = message.state;
          existing.timestamp = Math.max(existing.timestamp, message.timestamp);
          if (message.seqId !== null) existing.seqId = message.seqId;
          changed = true;
        }
        continue;
      }
      const key = sentKey(message);
      const clash = this.entries.get(key);
      if (clash) {
        // A message number used again after the older message was done: a new message, so the older
        // one moves to a key of its own.
        this.entries.delete(key);
        clash.key = `${key}@${clash.order}`;
        this.entries.set(clash.key, clash);
      }
      this.entries.set(key, { key, ...message, order: message.timestamp, sequence: this.sequence++ });
      changed = true;
    }
    if (this.entries.size > MAX_ENTRIES) this.trim();
    return { received, changed };
  }

  /** The sent entry `message` updates, if there is one. */
  findSent(message) {
    if (message.clientId !== null) {
      const byClient = this.entries.get(`c:${message.clientId}`);
      if (byClient) return byClient;
    }
    if (message.seqId === null) return this.entries.get(`t:${message.timestamp}`) ?? null;
    const byNumber = this.entries.get(`s:${message.peer}:${message.seqId}`);
    if (byNumber && (byNumber.text === message.text || !FINAL_STATES.has(byNumber.state))) {
      if (message.clientId === null || byNumber.clientId === null) return byNumber;
    }
    // The same message under its clientId key (the send answer had it; a later sync may not).
    for (const entry of this.entries.values()) {
      if (
        entry.direction === "sent" &&
        entry.peer === message.peer &&
        entry.seqId === message.seqId &&
        entry.text === message.text &&
        !FINAL_STATES.has(entry.state)
      ) {
        return entry;
      }
    }
    return null;
  }

  /** Drops the oldest entries beyond MAX_ENTRIES. */
  trim() {
    const sorted = [...this.entries.values()].sort(byOrder);
    for (const entry of sorted.slice(0, sorted.length - MAX_ENTRIES)) this.entries.delete(entry.key);
  }

  /** The conversation with `peer`, oldest first. */
  conversation(peer) {
    const wanted = String(peer).toUpperCase();
    return [...this.entries.values()].filter((entry) => entry.peer === wanted).sort(byOrder);
  }

  /** Every conversation: `{peer, last, unread}`, the one with the newest message first. */
  conversations() {
    const byPeer = new Map();
    for (const entry of this.entries.values()) {
      const current = byPeer.get(entry.peer);
      if (!current) {
        byPeer.set(entry.peer, { peer: entry.peer, last: entry, unread: 0 });
      } else if (byOrder(current.last, entry) < 0) {
        current.last = entry;
      }
    }
    for (const conversation of byPeer.values()) conversation.unread = this.unread(conversation.peer);
    return [...byPeer.values()].sort((a, b) => byOrder(b.last, a.last));
  }

  /** Received messages from `peer` newer than what the user has seen. */
  unread(peer) {
    const seen = Math.max(this.lastRead.get(peer) ?? 0, this.readAll);
    let count = 0;
    for (const entry of this.entries.values()) {
      if (entry.peer === peer && entry.direction === "received" && entry.order > seen) count += 1;
    }
    return count;
  }

  /** Unread messages over all conversations. */
  totalUnread() {
    let total = 0;
    for (const peer of new Set([...this.entries.values()].map((entry) => entry.peer))) {
      total += this.unread(peer);
    }
    return total;
  }

  /**
   * Marks everything received from `peer` as seen: the timestamp of the newest such message when that changed
   * a count (the `upTo` of a `/v1/read`), else 0.
   */
  markRead(peer) {
    const before = Math.max(this.lastRead.get(peer) ?? 0, this.readAll);
    let newest = before;
    for (const entry of this.entries.values()) {
      if (entry.peer === peer && entry.direction === "received" && entry.order > newest) newest = entry.order;
    }
    if (newest === before) return 0;
    this.lastRead.set(peer, newest);
    return newest;
  }

  /** Marks every conversation read; the newest received timestamp when that changed a count, else 0. */
  markAllRead() {
    let newest = this.readAll;
    for (const entry of this.entries.values()) {
      if (entry.direction === "received" && entry.order > newest) newest = entry.order;
    }
    if (newest === this.readAll || this.totalUnread() === 0) return 0;
    this.readAll = newest;
    return newest;
  }

  /**
   * Takes an answer's read markers (`want:["inbox"]`: `{"<peer>": upTo, "*": upTo}`, set by any device of the
   * station); a marker never moves back. True when a count may have changed.
   */
  applyRead(read) {
    if (!read || typeof read !== "object" || Array.isArray(read)) return false;
    let changed = false;
    for (const [peer, upTo] of Object.entries(read)) {
      if (!Number.isSafeInteger(upTo) || upTo <= 0) continue;
      if (peer === "*") {
        if (upTo > this.readAll) {
          this.readAll = upTo;
          changed = true;
        }
        continue;
      }
      if (peer.length > 16) continue;
      const key = peer.toUpperCase();
      if (upTo > (this.lastRead.get(key) ?? 0)) {
        this.lastRead.set(key, upTo);
        changed = true;
      }
    }
    return changed;
  }
}

/** Oldest first; entries with one time keep the order they arrived in. */
function byOrder(a, b) {
  return a.order - b.order || a.sequence - b.sequence;
}

function sentKey(message) {
  if (message.clientId !== null) return `c:${message.clientId}`;
  if (message.seqId !== null) return `s:${message.peer}:${message.seqId}`;
  return `t:${message.timestamp}`;
}

/**
 * One message of an answer in the shape the inbox keeps, or null when it is not a message to show
 * (acks and rejs, or a malformed entry). The server's own fields only; text is never trusted as markup.
 */
export function normalise(raw) {
  if (!raw || typeof raw !== "object") return null;
  const { direction, peer, text, timestamp } = raw;
  if (direction !== "received" && direction !== "sent") return null;
  if (raw.type !== undefined && raw.type !== "message") return null;
  if (typeof peer !== "string" || peer === "" || typeof text !== "string") return null;
  if (!Number.isSafeInteger(timestamp)) return null;
  return {
    direction,
    type: "message",
    peer: peer.toUpperCase(),
    text,
    timestamp,
    seqId: typeof raw.seqId === "string" ? raw.seqId : null,
    state: direction === "sent" && typeof raw.state === "string" ? raw.state : null,
    clientId: direction === "sent" && typeof raw.clientId === "string" ? raw.clientId : null,
    // The addressee, on entries for another SSID of the call (`want:["ssids"]`).
    to: typeof raw.to === "string" && raw.to.length <= 16 ? raw.to.toUpperCase() : null,
  };
}

/** Kinds of subscription entries (`want:["subscriptions"]`). */
export const CATCH_KINDS = ["bulletin", "group", "nws", "watch"];
/** Subscription entries kept at most. */
export const MAX_CATCHES = 500;

/**
 * What the station's subscriptions caught (bulletins, group messages, NWS alerts, watch events), newest first,
 * keyed on their timestamp (unique across the database); kept in memory only.
 */
export class Catches {
  constructor() {
    /** @type {Map<number, object>} */
    this.entries = new Map();
  }

  /** Takes an answer's entries; the number new to it. Anything that is not a well-formed entry is skipped. */
  merge(messages) {
    let added = 0;
    if (!Array.isArray(messages)) return added;
    for (const raw of messages) {
      const entry = normaliseCatch(raw);
      if (!entry || this.entries.has(entry.timestamp)) continue;
      this.entries.set(entry.timestamp, entry);
      added += 1;
    }
    if (this.entries.size > MAX_CATCHES) {
      const oldest = [...this.entries.keys()].sort((a, b) => a - b).slice(0, this.entries.size - MAX_CATCHES);
      for (const key of oldest) this.entries.delete(key);
    }
    return added;
  }

  /** Every entry, newest first; with `subscription`, only that subscription's. */
  list(subscription = null) {
    return [...this.entries.values()]
      .filter((entry) => subscription === null || entry.subscription === subscription)
      .sort((a, b) => b.timestamp - a.timestamp);
  }
}

/** One subscription entry of an answer as the page keeps it, or null. */
export function normaliseCatch(raw) {
  if (!raw || typeof raw !== "object" || raw.direction !== "received" || !CATCH_KINDS.includes(raw.type)) return null;
  if (typeof raw.peer !== "string" || raw.peer === "" || typeof raw.text !== "string") return null;
  if (!Number.isSafeInteger(raw.timestamp)) return null;
  const number = (value) => (typeof value === "number" && Number.isFinite(value) ? value : null);
  return {
    type: raw.type,
    peer: raw.peer.toUpperCase(),
    text: raw.text,
    timestamp: raw.timestamp,
    to: typeof raw.to === "string" ? raw.to.toUpperCase() : null,
    subscription: typeof raw.subscription === "string" ? raw.subscription : null,
    event: ["heard", "silent", "emergency"].includes(raw.event) ? raw.event : null,
    latitude: number(raw.latitude),
    longitude: number(raw.longitude),
  };
}
