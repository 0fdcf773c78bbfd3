-- Owned stations (docs/protocol.md "Owned stations"): a station claimed with POST /v1/claim has a station key; only
-- its SHA-256 is kept (lower-case hex). Without the key a claimed station's settings, sending, whole-station unregister and ACK
-- policy cannot be touched, and keyless devices and long polls cannot push out the owner's.

-- The claim, on the station row, so it goes with the station (unregister, expiry). All three NULL: unclaimed.
-- `claim_refreshed_at` is the last register or heartbeat made with the key: the claim lapses when it is older
-- than the station expiry, even while keyless devices keep the station alive.
ALTER TABLE stations ADD COLUMN claim_key_hash TEXT CHECK (claim_key_hash IS NULL OR length(claim_key_hash) = 64);
ALTER TABLE stations ADD COLUMN claimed_at INTEGER;
ALTER TABLE stations ADD COLUMN claim_refreshed_at INTEGER;

-- The `ackMessages` the station's last register carried (NULL: none known). Register changes the ACK policy only
-- when its value differs from this one (the app's switch moved), so the app, which sends `ackMessages` on every
-- launch, no longer resets a policy chosen in /v1/settings. Existing stations start from the value their policy
-- stands for; a station on 'device' starts unknown, and register then only records its value.
ALTER TABLE stations ADD COLUMN register_ack_messages INTEGER CHECK (register_ack_messages IN (0, 1));
UPDATE stations SET register_ack_messages = CASE ack_policy WHEN 'server' THEN 1 WHEN 'never' THEN 0 END;

-- A device registered or heartbeated with the station key is the owner's (1): keyless requests never push it
-- out. Keyless devices of a claimed station share a pool of their own (`[limits] keylessDevicesPerStation`).
ALTER TABLE devices ADD COLUMN keyed INTEGER NOT NULL DEFAULT 0 CHECK (keyed IN (0, 1));

-- Whether a claimed station takes devices registered without its key: 'allow' (the default) or 'deny'.
ALTER TABLE station_settings ADD COLUMN keyless_devices TEXT NOT NULL DEFAULT 'allow'
  CHECK (keyless_devices IN ('allow', 'deny'));

-- What happened to a station's ownership and settings, for its owner and the operator (`aprs-cloud stations
-- CALL-SSID`): claims, rotations, releases, lapses, settings changes, whole-station unregisters. Not tied to the
-- station row, so an unregister stays on record. `client` is the limits key of the request's address (IPv4
-- address, IPv6 /64, `unknown`) or `operator`. Each station keeps its newest 100 entries; maintenance drops
-- entries older than a year.
CREATE TABLE station_audit (
  id      INTEGER PRIMARY KEY,
  station TEXT NOT NULL CHECK (station <> '' AND station = upper(station)),
  at      INTEGER NOT NULL,
  action  TEXT NOT NULL
    CHECK (action IN ('claimed', 'rotated', 'released', 'lapsed', 'settings', 'unregistered', 'ackPolicy')),
  client  TEXT NOT NULL,
  detail  TEXT NOT NULL DEFAULT ''
);
CREATE INDEX station_audit_station ON station_audit (station, id);
CREATE INDEX station_audit_at ON station_audit (at);
CREATE INDEX stations_claim_refreshed ON stations (claim_refreshed_at) WHERE claim_key_hash IS NOT NULL;
