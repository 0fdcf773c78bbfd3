-- Read markers shared by every device of a station (docs/protocol.md "Opt-in answers", `POST /v1/read {peer, upTo}`):
-- the station has read its conversation with `peer` (upper case, or '*' for all) up to the message timestamp
-- `up_to`. `changed_at` is taken from the message timestamps' own sequence (meta `last_message_ts`), so a sync
-- cursor orders markers and messages alike: a sync with `want:["inbox"]` returns the markers changed after its
-- `since`, and a held long poll of the station wakes for them.
CREATE TABLE read_markers (
  station    TEXT NOT NULL REFERENCES stations (address) ON DELETE CASCADE,
  peer       TEXT NOT NULL CHECK (peer <> '' AND peer = upper(peer)),
  up_to      INTEGER NOT NULL CHECK (up_to >= 0),
  changed_at INTEGER NOT NULL,
  PRIMARY KEY (station, peer)
) WITHOUT ROWID;
CREATE INDEX read_markers_changed ON read_markers (changed_at);
