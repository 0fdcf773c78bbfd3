-- Subscription entries (docs/protocol.md "Opt-in answers (`want`)", `want:["subscriptions"]`): traffic a claimed
-- station subscribed to (bulletins, group calls, NWS zones, watched stations) is stored as a message row of its
-- own type, in a ring of its own, never ACKed, shown only to requests that ask for it.

-- The entry's type: NULL for a message to the station (every row before this migration), else the kind of the
-- subscription it matched. `subscription` is that subscription's id (the first one, when several matched).
-- Bulletin, group and NWS entries keep the sender in `peer` and the addressee (`BLN3WX`, `SLCARES`,
-- `NWS-WARN`) in `addressee`. Watch entries have the watched call in `peer`, what happened in `event`, a
-- readable summary in `text` and, when the packet had one, the position in `latitude`/`longitude` (degrees).
ALTER TABLE messages ADD COLUMN kind TEXT CHECK (kind IS NULL OR kind IN ('bulletin', 'group', 'nws', 'watch'));
ALTER TABLE messages ADD COLUMN subscription TEXT;
ALTER TABLE messages ADD COLUMN event TEXT CHECK (event IS NULL OR event IN ('heard', 'silent', 'emergency'));
ALTER TABLE messages ADD COLUMN latitude REAL CHECK (latitude IS NULL OR latitude BETWEEN -90 AND 90);
ALTER TABLE messages ADD COLUMN longitude REAL CHECK (longitude IS NULL OR longitude BETWEEN -180 AND 180);
-- Which ring a row is in (each is trimmed to the ring size on its own, and shown only to whom asked for it):
-- 0 messages to the station, 1 messages to other SSIDs of its call (`want:["ssids"]`), 2 subscription
-- entries (`want:["subscriptions"]`). Computed, never stored.
ALTER TABLE messages ADD COLUMN ring INTEGER GENERATED ALWAYS AS (
  CASE WHEN kind IS NOT NULL THEN 2 WHEN addressee IS NOT NULL THEN 1 ELSE 0 END) VIRTUAL;

-- What the listener knows of each watch (`WatchState`): when the call was last heard (epoch ms, or when the
-- watch began), whether its silence was reported, its last emergency flags. Kept across restarts so a silence is
-- neither forgotten nor reported twice. A row whose subscription is gone is deleted with the change that
-- removed it (`replaceSubscriptions`); rows go with their station.
CREATE TABLE watch_states (
  station           TEXT NOT NULL REFERENCES stations (address) ON DELETE CASCADE,
  subscription      TEXT NOT NULL,
  last_heard_at     INTEGER NOT NULL,
  silence_reported  INTEGER NOT NULL DEFAULT 0 CHECK (silence_reported IN (0, 1)),
  mic_e_emergency   INTEGER NOT NULL DEFAULT 0 CHECK (mic_e_emergency IN (0, 1)),
  status_emergency  INTEGER NOT NULL DEFAULT 0 CHECK (status_emergency IN (0, 1)),
  -- When the silence will be due (epoch ms), NULL when no silence is to report: the clock's index.
  silence_due_at    INTEGER,
  PRIMARY KEY (station, subscription)
) WITHOUT ROWID;
CREATE INDEX watch_states_due ON watch_states (silence_due_at) WHERE silence_due_at IS NOT NULL;

-- Bumped by every change of any subscription, so the listener reloads its index only when one changed.
INSERT INTO meta (key, value) VALUES ('subscriptions_version', '0');
CREATE TRIGGER subscriptions_changed_insert AFTER INSERT ON subscriptions BEGIN
  UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'subscriptions_version';
END;
CREATE TRIGGER subscriptions_changed_update AFTER UPDATE ON subscriptions BEGIN
  UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'subscriptions_version';
END;
CREATE TRIGGER subscriptions_changed_delete AFTER DELETE ON subscriptions BEGIN
  UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'subscriptions_version';
END;

-- Devices' `wants` gain bit 2 = "subscriptions" (no change of the column: a bit set).
