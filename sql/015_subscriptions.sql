-- A claimed station's subscriptions (POST /v1/settings `subscriptions`, at most 20; docs/protocol.md "Opt-in answers"):
-- traffic that is not a message to the station itself. `target` by kind:
--   bulletin: the addressee pattern (BLN*, BLN?WX);  group: the call;  nws: the zones, space separated;
--   watch: the watched call (with heard_after / silent_for in s and emergency).
-- `id` is the server's (`s` + base-36 digits), kept while the subscription exists. Deleted with the station.
CREATE TABLE subscriptions (
  station     TEXT NOT NULL REFERENCES stations (address) ON DELETE CASCADE,
  id          TEXT NOT NULL CHECK (id <> ''),
  position    INTEGER NOT NULL,
  kind        TEXT NOT NULL CHECK (kind IN ('bulletin', 'group', 'nws', 'watch')),
  target      TEXT NOT NULL CHECK (target <> ''),
  heard_after INTEGER,
  silent_for  INTEGER,
  emergency   INTEGER NOT NULL DEFAULT 0,
  bypass      INTEGER NOT NULL DEFAULT 0,
  created_at  INTEGER NOT NULL,
  PRIMARY KEY (station, id)
) WITHOUT ROWID;
CREATE INDEX subscriptions_kind ON subscriptions (kind, target);
