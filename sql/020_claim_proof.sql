-- Claims that are proven where a station is in use (docs/design.md "Who may do what"). A claim of a station
-- nobody used is first-come (`proven` at once); a claim of a station in use is `provisional` until a device the
-- station already had confirms it with a code pushed to it, or the operator approves it. Claims made before this
-- migration are `unproven`: they keep their powers, and a device older than the claim may take the station back.
--
-- `created_at`: when the station row was first made (a later register moves `registered_at`, never this). Rows
-- from before this migration take the oldest time known of them.
ALTER TABLE stations ADD COLUMN created_at INTEGER;
UPDATE stations SET created_at = min(
  registered_at, heartbeat_at,
  coalesce((SELECT min(registered_at) FROM devices WHERE devices.station = stations.address), registered_at),
  coalesce(claimed_at, registered_at));
-- `claim_proof`: 'proven', 'unproven' or 'provisional' while the station is claimed, else NULL.
-- `claim_seniority`: a device registered before this time (epoch ms) may take the claim back with a code pushed
-- to it; the registration time of the device that proved the claim, the claim's own time for a first-come or an
-- older claim, 0 once the operator approved it (nobody can take it back then).
-- `claim_replaced_hash`: the key hash of the claim a proof last replaced, so that key's 401 says why.
ALTER TABLE stations ADD COLUMN claim_proof TEXT CHECK (claim_proof IS NULL OR claim_proof IN ('proven', 'unproven', 'provisional'));
ALTER TABLE stations ADD COLUMN claim_seniority INTEGER;
ALTER TABLE stations ADD COLUMN claim_replaced_hash TEXT CHECK (claim_replaced_hash IS NULL OR length(claim_replaced_hash) = 64);
UPDATE stations SET claim_proof = 'unproven', claim_seniority = claimed_at WHERE claim_key_hash IS NOT NULL;

-- What a deleted station leaves behind for a while (a whole-station unregister, which the passcode alone may do on a
-- station nobody governs, or the expiry): when it was made and last heard. A station registered again soon after
-- keeps its first `created_at`, so that wiping a station in use and claiming it at once is no first-come claim.
-- Maintenance drops a row once `last_heard_at` is older than the station expiry.
CREATE TABLE station_tombstones (
  address       TEXT PRIMARY KEY NOT NULL,
  created_at    INTEGER NOT NULL,
  last_heard_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TRIGGER station_tombstones_on_delete AFTER DELETE ON stations
BEGIN
  INSERT INTO station_tombstones (address, created_at, last_heard_at)
    VALUES (old.address, coalesce(old.created_at, old.registered_at), old.heartbeat_at)
  ON CONFLICT (address) DO UPDATE SET
    created_at = min(station_tombstones.created_at, excluded.created_at),
    last_heard_at = max(station_tombstones.last_heard_at, excluded.last_heard_at);
END;

-- When each push token was first registered for a station, kept while it is heard within the station expiry even
-- after its device row went (pushed out of a full station, unregistered, wiped with the station): a device that
-- comes back keeps its first `registered_at`. Claims are proven and taken back by devices' registration times, so
-- nobody makes the station's real phone younger by deleting its row. Maintenance drops rows not seen within the
-- expiry.
CREATE TABLE devices_seen (
  station             TEXT NOT NULL,
  token               TEXT NOT NULL,
  first_registered_at INTEGER NOT NULL,
  last_seen_at        INTEGER NOT NULL,
  PRIMARY KEY (station, token)
) WITHOUT ROWID;
INSERT INTO devices_seen (station, token, first_registered_at, last_seen_at)
  SELECT station, token, registered_at, refreshed_at FROM devices;
CREATE INDEX devices_seen_last ON devices_seen (last_seen_at);

-- A claim waiting for its proof: the station's provisional claim itself, or a claim that would take the station
-- back from a provisional, unproven or younger claim. The key is known only by its SHA-256, as on the station
-- row. `codes_due` is 1 while the push sender is to push codes (a request, or a resend); `codes_pushed` counts
-- the rounds of codes pushed (at most 3 a request); `codes_expire_at` ends the round's codes (10 minutes);
-- `wrong` counts wrong codes (5 void the round). `seniority` is the bound of the devices that get codes: those
-- registered before it.
CREATE TABLE claim_requests (
  station         TEXT NOT NULL REFERENCES stations (address) ON DELETE CASCADE,
  key_hash        TEXT NOT NULL CHECK (length(key_hash) = 64),
  requested_at    INTEGER NOT NULL,
  seniority       INTEGER NOT NULL,
  client          TEXT NOT NULL,
  codes_due       INTEGER NOT NULL DEFAULT 1 CHECK (codes_due IN (0, 1)),
  codes_pushed    INTEGER NOT NULL DEFAULT 0,
  codes_expire_at INTEGER,
  wrong           INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (station, key_hash)
) WITHOUT ROWID;
CREATE INDEX claim_requests_due ON claim_requests (codes_due) WHERE codes_due = 1;

-- The codes of a request's current round, one per device it was pushed to. The code itself is never stored:
-- `code_hash` is the lower-case hex SHA-256 of `salt` (random, per code) followed by the code's digits.
-- `registered_at` is the device's, kept as the proof's seniority should its code be the one entered.
CREATE TABLE claim_codes (
  station       TEXT NOT NULL,
  key_hash      TEXT NOT NULL,
  token         TEXT NOT NULL,
  registered_at INTEGER NOT NULL,
  salt          TEXT NOT NULL,
  code_hash     TEXT NOT NULL CHECK (length(code_hash) = 64),
  PRIMARY KEY (station, key_hash, token),
  FOREIGN KEY (station, key_hash) REFERENCES claim_requests (station, key_hash) ON DELETE CASCADE
) WITHOUT ROWID;

-- The audit trail takes the proof's actions: `proven` (a code, or the operator, proved a claim) and `replaced`
-- (a proven claim took the station back from another).
CREATE TABLE station_audit_new (
  id      INTEGER PRIMARY KEY,
  station TEXT NOT NULL CHECK (station <> '' AND station = upper(station)),
  at      INTEGER NOT NULL,
  action  TEXT NOT NULL
    CHECK (action IN ('claimed', 'rotated', 'released', 'lapsed', 'settings', 'unregistered', 'ackPolicy',
                      'proven', 'replaced')),
  client  TEXT NOT NULL,
  detail  TEXT NOT NULL DEFAULT ''
);
INSERT INTO station_audit_new (id, station, at, action, client, detail)
  SELECT id, station, at, action, client, detail FROM station_audit;
DROP TABLE station_audit;
ALTER TABLE station_audit_new RENAME TO station_audit;
CREATE INDEX station_audit_station ON station_audit (station, id);
CREATE INDEX station_audit_at ON station_audit (at);
