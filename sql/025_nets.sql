-- Nets and rooms (docs/protocol.md "Nets and rooms"): a station joins an APRS group service's group (ANSRVR,
-- CQSRVR) through its own sends, the service's fan-out becomes the entries of a room, and the station can post to
-- the room.
--
-- Subscriptions gain the kind `net`: `target` is the room (`SERVICE/GROUP`, `ANSRVR/HOTG`), `net_join` how the
-- station joins (`silent`: the service's silent join; `post`: a post of `net_text`), `net_renew` whether the
-- listener renews a membership that lapses, `net_digest` the least time between two pushes of the room (s).
-- SQLite cannot change a CHECK constraint in place, so the table is rebuilt with the same rows, index and
-- triggers (the runner turns foreign keys off around migrations).
CREATE TABLE subscriptions_new (
  station     TEXT NOT NULL REFERENCES stations (address) ON DELETE CASCADE,
  id          TEXT NOT NULL CHECK (id <> ''),
  position    INTEGER NOT NULL,
  kind        TEXT NOT NULL CHECK (kind IN ('bulletin', 'group', 'nws', 'watch', 'net')),
  target      TEXT NOT NULL CHECK (target <> ''),
  heard_after INTEGER,
  silent_for  INTEGER,
  emergency   INTEGER NOT NULL DEFAULT 0,
  bypass      INTEGER NOT NULL DEFAULT 0,
  created_at  INTEGER NOT NULL,
  net_join    TEXT CHECK (net_join IS NULL OR net_join IN ('silent', 'post')),
  net_text    TEXT,
  net_renew   INTEGER NOT NULL DEFAULT 0 CHECK (net_renew IN (0, 1)),
  net_digest  INTEGER CHECK (net_digest IS NULL OR net_digest >= 0),
  PRIMARY KEY (station, id)
) WITHOUT ROWID;
INSERT INTO subscriptions_new (station, id, position, kind, target, heard_after, silent_for, emergency, bypass,
                               created_at)
  SELECT station, id, position, kind, target, heard_after, silent_for, emergency, bypass, created_at
  FROM subscriptions;
DROP TABLE subscriptions;
ALTER TABLE subscriptions_new RENAME TO subscriptions;
CREATE INDEX subscriptions_kind ON subscriptions (kind, target);
CREATE TRIGGER subscriptions_changed_insert AFTER INSERT ON subscriptions BEGIN
  UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'subscriptions_version';
END;
CREATE TRIGGER subscriptions_changed_update AFTER UPDATE ON subscriptions BEGIN
  UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'subscriptions_version';
END;
CREATE TRIGGER subscriptions_changed_delete AFTER DELETE ON subscriptions BEGIN
  UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'subscriptions_version';
END;
UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'subscriptions_version';

-- A room entry (`type:"net"` on the wire) is a subscription entry (`kind = 'group'`, so it lives in the
-- subscription ring and the CHECK of `messages.kind` stays as it is) with its room in `room`: a post fanned out by
-- the service (`peer` the real sender), the service's answer (`peer` the service), or the station's own send to the
-- service (`direction = 'sent'`: a join, a renewal, a leave or a post). Shown only to `want:["rooms"]`.
ALTER TABLE messages ADD COLUMN room TEXT CHECK (room IS NULL OR room GLOB '*/*');
CREATE INDEX messages_room ON messages (station, room, timestamp) WHERE room IS NOT NULL;

-- What the server knows of each membership of a station in a group: when it joined (its join or last renewal was
-- accepted, epoch ms), which send did it, when the listener renews it (NULL: not renewed: `renew` off, or the
-- service keeps members until they leave), the station's last post to the group through this server (a service's
-- least time between posts counts from it), the time the room's last digest push was due, and when it left (NULL
-- while a member; the row stays so the post rule outlives a leave).
CREATE TABLE net_memberships (
  station         TEXT NOT NULL REFERENCES stations (address) ON DELETE CASCADE,
  room            TEXT NOT NULL CHECK (room GLOB '*/*'),
  subscription    TEXT,
  joined_at       INTEGER,
  join_message_id INTEGER,
  renew_at        INTEGER,
  last_post_at    INTEGER,
  digest_due_at   INTEGER,
  left_at         INTEGER,
  PRIMARY KEY (station, room)
) WITHOUT ROWID;
CREATE INDEX net_memberships_renew ON net_memberships (renew_at) WHERE renew_at IS NOT NULL;

-- The audit trail takes what a station does on air beyond a message: `net` (a join, renewal, leave or post of a
-- net) and `bulletin` (a bulletin or announcement sent, or cancelled).
CREATE TABLE station_audit_new (
  id      INTEGER PRIMARY KEY,
  station TEXT NOT NULL CHECK (station <> '' AND station = upper(station)),
  at      INTEGER NOT NULL,
  action  TEXT NOT NULL
    CHECK (action IN ('claimed', 'rotated', 'released', 'lapsed', 'settings', 'unregistered', 'ackPolicy',
                      'proven', 'replaced', 'net', 'bulletin')),
  client  TEXT NOT NULL,
  detail  TEXT NOT NULL DEFAULT ''
);
INSERT INTO station_audit_new (id, station, at, action, client, detail)
  SELECT id, station, at, action, client, detail FROM station_audit;
DROP TABLE station_audit;
ALTER TABLE station_audit_new RENAME TO station_audit;
CREATE INDEX station_audit_station ON station_audit (station, id);
CREATE INDEX station_audit_at ON station_audit (at);
