-- aprs-cloud schema, version 1. Migrations in this directory are the only definition of the
-- schema; each runs once, in order, in its own transaction. Times are epoch milliseconds.
-- Station addresses are stored in upper case: CALL, or CALL-SSID when the SSID is not 0.

-- Registered stations: one row per station address (register and heartbeat both upsert it).
CREATE TABLE stations (
  address          TEXT PRIMARY KEY NOT NULL CHECK (address <> '' AND address = upper(address)),
  base             TEXT NOT NULL CHECK (base <> '' AND base = upper(base)),
  ssid             INTEGER NOT NULL CHECK (ssid BETWEEN 0 AND 15),
  platform         TEXT,                                   -- NULL for a sync-only station
  ack_messages     INTEGER NOT NULL DEFAULT 0 CHECK (ack_messages IN (0, 1)),
  registered_at    INTEGER NOT NULL,
  heartbeat_at     INTEGER NOT NULL,
  last_sync_cursor INTEGER NOT NULL DEFAULT 0,             -- serverTime of its last sync
  last_sync_at     INTEGER                                 -- when that cursor last advanced
);
CREATE INDEX stations_heartbeat ON stations (heartbeat_at);

-- Push tokens: one row per token; a token registered for another station moves there.
CREATE TABLE devices (
  id            INTEGER PRIMARY KEY,
  token         TEXT NOT NULL UNIQUE CHECK (token <> ''),
  station       TEXT NOT NULL REFERENCES stations (address) ON DELETE CASCADE,
  platform      TEXT NOT NULL,
  registered_at INTEGER NOT NULL,                          -- when it joined this station
  refreshed_at  INTEGER NOT NULL                           -- last register or heartbeat
);
CREATE INDEX devices_station ON devices (station);

-- The ring of each station's newest messages. `timestamp` is the sync cursor: unique and
-- strictly increasing in commit order across the whole database.
CREATE TABLE messages (
  id        INTEGER PRIMARY KEY,
  station   TEXT NOT NULL REFERENCES stations (address) ON DELETE CASCADE,
  direction TEXT NOT NULL CHECK (direction IN ('received', 'sent')),
  peer      TEXT NOT NULL,
  text      TEXT NOT NULL,
  msgno     TEXT,                                          -- seqId; never a number
  timestamp INTEGER NOT NULL UNIQUE
);
CREATE INDEX messages_station_timestamp ON messages (station, timestamp);

-- Retransmission dedup: a key seen before `expires_at` is not stored again.
CREATE TABLE dedup (
  key        TEXT PRIMARY KEY NOT NULL,
  first_seen INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX dedup_expires ON dedup (expires_at);

-- When an ACK was last sent for a message key (at most one per 30 s per message).
CREATE TABLE ack_state (
  key          TEXT PRIMARY KEY NOT NULL,
  last_sent_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX ack_state_last_sent ON ack_state (last_sent_at);

-- Pushes to send, written in the same transaction as their message.
CREATE TABLE outbox (
  id              INTEGER PRIMARY KEY,
  station         TEXT NOT NULL REFERENCES stations (address) ON DELETE CASCADE,
  message_id      INTEGER NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
  created_at      INTEGER NOT NULL,
  state           TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'failed')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL
);
CREATE INDEX outbox_due ON outbox (state, next_attempt_at);
CREATE INDEX outbox_station ON outbox (station);
CREATE INDEX outbox_message ON outbox (message_id);

-- The listener lease: at most one row; only its holder may run a listener until it expires.
CREATE TABLE listener_lease (
  id          INTEGER PRIMARY KEY CHECK (id = 1),
  holder      TEXT NOT NULL,
  acquired_at INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL
);

-- Fixed-window rate limits shared by every responder process.
CREATE TABLE rate_limits (
  key          TEXT PRIMARY KEY NOT NULL,
  window_start INTEGER NOT NULL,
  count        INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL                            -- window_start + window length
) WITHOUT ROWID;
CREATE INDEX rate_limits_expires ON rate_limits (expires_at);

-- Small settings and counters. `last_message_ts` is the newest message timestamp ever
-- assigned (never goes back, even when messages roll off or stations are deleted).
CREATE TABLE meta (
  key   TEXT PRIMARY KEY NOT NULL,
  value TEXT NOT NULL
) WITHOUT ROWID;
INSERT INTO meta (key, value) VALUES ('last_message_ts', '0');
