-- All-SSID inbox (docs/protocol.md "Opt-in answers (`want`)", settings `ssids` and `ackSsids`): a claimed station may
-- collect the messages to other SSIDs of its call. Such entries carry their addressee and live in a ring of
-- their own, returned only to requests with `want:["ssids"]`; every other answer stays as it was.

-- `ssids`: 'exact' (the default: only the station's own address), 'all' (every SSID 0–15 of the call) or the
-- chosen SSIDs as decimal numbers separated by single spaces, ascending, the station's own included ('0 7 9').
-- `ack_ssids`: the SSIDs (same spelling, '' for none) whose messages the server ACKs on the station's behalf.
ALTER TABLE station_settings ADD COLUMN ssids TEXT NOT NULL DEFAULT 'exact'
  CHECK (ssids IN ('exact', 'all') OR (ssids <> '' AND ssids NOT GLOB '*[^0-9 ]*'));
ALTER TABLE station_settings ADD COLUMN ack_ssids TEXT NOT NULL DEFAULT ''
  CHECK (ack_ssids NOT GLOB '*[^0-9 ]*');
-- The listener reads the few stations that chose more than their own SSID for its filter and routing.
CREATE INDEX station_settings_other_ssids ON station_settings (station) WHERE ssids <> 'exact';

-- The addressee of an entry stored for another SSID of the station's call (upper case, `CALL-0` as `CALL`);
-- NULL for everything addressed to the station itself (every row before this migration).
ALTER TABLE messages ADD COLUMN addressee TEXT CHECK (addressee IS NULL OR (addressee <> '' AND addressee = upper(addressee)));

-- Devices: a push token may now be registered for several stations (one row per station and token), and each
-- row keeps the `want` names its register carried (`wants`, a bit set: 1 = "ssids"), so the push sender knows
-- which devices take pushes for other-SSID entries. SQLite cannot change a UNIQUE constraint in place, so the
-- table is rebuilt with the same rows (the runner turns foreign keys off around migrations).
CREATE TABLE devices_new (
  id               INTEGER PRIMARY KEY,
  token            TEXT NOT NULL CHECK (token <> ''),
  station          TEXT NOT NULL REFERENCES stations (address) ON DELETE CASCADE,
  platform         TEXT NOT NULL,
  registered_at    INTEGER NOT NULL,                       -- when it joined this station
  refreshed_at     INTEGER NOT NULL,                       -- last register or heartbeat
  apns_environment TEXT CHECK (apns_environment IS NULL OR apns_environment IN ('production', 'sandbox')),
  push_p256dh      TEXT CHECK (push_p256dh IS NULL OR length(push_p256dh) = 87),
  push_auth        TEXT CHECK (push_auth IS NULL OR length(push_auth) = 22),
  keyed            INTEGER NOT NULL DEFAULT 0 CHECK (keyed IN (0, 1)),
  wants            INTEGER NOT NULL DEFAULT 0 CHECK (wants >= 0),
  UNIQUE (station, token)
);
INSERT INTO devices_new (id, token, station, platform, registered_at, refreshed_at, apns_environment,
                         push_p256dh, push_auth, keyed)
  SELECT id, token, station, platform, registered_at, refreshed_at, apns_environment, push_p256dh, push_auth, keyed
  FROM devices;
DROP TABLE devices;
ALTER TABLE devices_new RENAME TO devices;
CREATE INDEX devices_token ON devices (token);
