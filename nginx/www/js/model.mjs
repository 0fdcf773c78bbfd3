// The inbox as data: messages from register/sync/send answers merged into conversations by peer, with
// unread counts and the sync cursor. Pure (no DOM, no storage, no clock): the page saves `toJSON()`
// where it wants to, and the Node tests drive it directly.
//
// Keys (PROTOCOL.md, "Messages" and "Sending messages"):
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
    const seen = this.lastRead.get(peer) ?? 0;
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

  /** Marks everything received from `peer` as seen; true when a count changed. */
  markRead(peer) {
    let newest = this.lastRead.get(peer) ?? 0;
    for (const entry of this.entries.values()) {
      if (entry.peer === peer && entry.direction === "received" && entry.order > newest) newest = entry.order;
    }
    if (newest === (this.lastRead.get(peer) ?? 0)) return false;
    this.lastRead.set(peer, newest);
    return true;
  }

  /** What to keep between visits (only when the user asked to be remembered). */
  toJSON() {
    return {
      version: 1,
      cursor: this.cursor,
      entries: [...this.entries.values()].sort(byOrder),
      lastRead: Object.fromEntries(this.lastRead),
    };
  }

  /** An inbox from `toJSON()`'s output; a damaged or foreign value gives an empty inbox. */
  static fromJSON(value) {
    const inbox = new Inbox();
    if (!value || typeof value !== "object" || value.version !== 1) return inbox;
    for (const raw of Array.isArray(value.entries) ? value.entries : []) {
      const message = normalise(raw);
      if (!message || typeof raw.key !== "string" || !Number.isSafeInteger(raw.order)) continue;
      inbox.entries.set(raw.key, { key: raw.key, ...message, order: raw.order, sequence: inbox.sequence++ });
    }
    if (value.lastRead && typeof value.lastRead === "object") {
      for (const [peer, order] of Object.entries(value.lastRead)) {
        if (Number.isSafeInteger(order)) inbox.lastRead.set(peer, order);
      }
    }
    inbox.advance(value.cursor);
    return inbox;
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
  };
}
