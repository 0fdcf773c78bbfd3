-- Station settings (docs/protocol.md "Station settings", POST /v1/settings): who is blocked, when pushes pause, and
-- when messages are ACKed. Everything here is deleted with its station.

-- When the listener ACKs the station's messages: 'server' (once stored), 'device' (once one of its devices
-- pulled the message, within 30 minutes of its arrival) or 'never'. Register's ackMessages sets 'server' or
-- 'never'. `ack_messages` stays, equal to (ack_policy = 'server'): the store writes both, and a write of
-- `ack_messages` alone (older tools, hand-written SQL) sets the policy to match through the triggers below.
ALTER TABLE stations ADD COLUMN ack_policy TEXT NOT NULL DEFAULT 'never'
  CHECK (ack_policy IN ('server', 'device', 'never'));
UPDATE stations SET ack_policy = 'server' WHERE ack_messages = 1;

CREATE TRIGGER stations_ack_messages_on_insert AFTER INSERT ON stations
WHEN new.ack_messages = 1 AND new.ack_policy = 'never'
BEGIN
  UPDATE stations SET ack_policy = 'server' WHERE address = new.address;
END;

CREATE TRIGGER stations_ack_messages_on_update AFTER UPDATE OF ack_messages ON stations
WHEN new.ack_messages IS NOT old.ack_messages AND new.ack_policy IS old.ack_policy
BEGIN
  UPDATE stations SET ack_policy = CASE WHEN new.ack_messages = 1 THEN 'server' ELSE 'never' END
  WHERE address = new.address;
END;

-- The other settings; a station without a row has the defaults (nothing blocked, not muted, no quiet hours).
-- Calls are upper case, separated by single spaces; a bare call stands for every SSID of it.
CREATE TABLE station_settings (
  station          TEXT PRIMARY KEY NOT NULL REFERENCES stations (address) ON DELETE CASCADE,
  blocked          TEXT NOT NULL DEFAULT '',               -- senders whose messages are dropped (at most 100)
  muted_until      INTEGER NOT NULL DEFAULT 0,             -- no pushes before this time; 0: not muted
  quiet_start      INTEGER CHECK (quiet_start BETWEEN 0 AND 1439),        -- minute of the local day
  quiet_end        INTEGER CHECK (quiet_end BETWEEN 0 AND 1439),          -- not inside the window
  quiet_utc_offset INTEGER CHECK (quiet_utc_offset BETWEEN -720 AND 840), -- local time = UTC + this, minutes
  quiet_bypass     TEXT NOT NULL DEFAULT '',               -- senders pushed even in the quiet hours
  updated_at       INTEGER NOT NULL,
  CHECK ((quiet_start IS NULL) = (quiet_end IS NULL) AND (quiet_start IS NULL) = (quiet_utc_offset IS NULL))
) WITHOUT ROWID;

-- ackPolicy 'device': the ACK each numbered message stored under it will earn, written with the message by the
-- listener. A sync (or long poll, or register with history) that returns the message within 30 minutes of its
-- arrival sets `pulled_at` in the transaction that reads it; the listener then sends the line (through the 30 s
-- rule of ack_state) and sets `acked_at`. A retransmitted copy of a pulled message is ACKed again. The row goes
-- with its message (ring trim, station deleted).
CREATE TABLE device_acks (
  message_id INTEGER PRIMARY KEY NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
  station    TEXT NOT NULL,                                -- the addressee, upper case
  ack_key    TEXT NOT NULL,                                -- the message's retransmission key (ack_state.key)
  line       TEXT NOT NULL,                                -- the ACK line, CR LF included
  pulled_at  INTEGER,                                      -- when a device pulled it within 30 min of arrival
  acked_at   INTEGER                                       -- when the listener handed its ACK on
);
CREATE INDEX device_acks_station_key ON device_acks (station, ack_key);
CREATE INDEX device_acks_due ON device_acks (pulled_at) WHERE pulled_at IS NOT NULL AND acked_at IS NULL;
