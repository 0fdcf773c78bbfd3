-- An inbox that never loses a message unseen (docs/protocol.md "Opt-in answers (`want`)", `want:["inbox"]`).

-- Setting `retention` of a claimed station: NULL is `{"mode":"ring"}` (the newest ring size, as before); a number
-- is `{"mode":"untilPulled","max":N}`: messages are kept until every keyed device of the station pulled them,
-- at most N (and at most the operator's `[server] maxUnpulledPerStation`), then the ring applies.
ALTER TABLE station_settings ADD COLUMN retention_max INTEGER CHECK (retention_max IS NULL OR retention_max >= 1);

-- The newest message timestamp each device pulled (a sync, long poll or register with history that named its
-- push token and carried the station key): what `untilPulled` keeps messages for.
ALTER TABLE devices ADD COLUMN pulled_through INTEGER NOT NULL DEFAULT 0;

-- Messages evicted before the station pulled them: `count` of them, when the store of the message with
-- timestamp `at` pushed them out. A sync with `want:["inbox"]` and cursor `since` reports the sum after `since`
-- (`dropped`); a push's `count` adds the ones after the station's cursor. Kept 30 days.
CREATE TABLE drops (
  station TEXT NOT NULL REFERENCES stations (address) ON DELETE CASCADE,
  at      INTEGER NOT NULL,
  count   INTEGER NOT NULL CHECK (count > 0),
  PRIMARY KEY (station, at)
) WITHOUT ROWID;
