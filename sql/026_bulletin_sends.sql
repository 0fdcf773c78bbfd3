-- Bulletin and announcement sends (docs/protocol.md "Bulletins and announcements"): `/v1/send` to `BLN0`–`BLN9`
-- or `BLNA`–`BLNZ` (plus a group of up to 5 letters or digits) goes out unnumbered on the bulletin schedule and is
-- never retried for an ACK.
-- - `kind`: 'message' (numbered, retried until answered, as before) or 'bulletin' (no message number: `msgno` is
--   NULL exactly for a bulletin, so no ack, rej or reply-ack ever matches it).
-- - The state 'completed': a bulletin whose schedule is over (it is never answered, so it never expires).
-- SQLite cannot change a CHECK constraint in place, so the table is rebuilt with the same rows and indexes (the
-- runner turns foreign keys off around migrations).
CREATE TABLE sends_new (
  message_id    INTEGER PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,
  station       TEXT NOT NULL CHECK (station <> '' AND station = upper(station)),  -- the sender
  addressee     TEXT NOT NULL CHECK (addressee <> '' AND addressee = upper(addressee)),
  kind          TEXT NOT NULL DEFAULT 'message' CHECK (kind IN ('message', 'bulletin')),
  msgno         TEXT CHECK (length(msgno) BETWEEN 1 AND 5 AND msgno NOT GLOB '*[^A-Za-z0-9]*'),
  client_id     TEXT,                                      -- the caller's idempotency key, if given
  state         TEXT NOT NULL DEFAULT 'pending'
                CHECK (state IN ('pending', 'acked', 'rejected', 'expired', 'cancelled', 'completed')),
  created_at    INTEGER NOT NULL,                          -- accepted; the schedule counts from here
  transmissions INTEGER NOT NULL DEFAULT 0,                -- copies recorded as written
  last_sent_at  INTEGER,                                   -- when the last copy was recorded
  next_at       INTEGER,                                   -- the next copy is due (NULL: none left, or finished)
  expires_at    INTEGER,                                   -- no answer by then: expired (a bulletin: completed)
  finished_at   INTEGER,                                   -- when the state left 'pending'
  budget_delay_ms INTEGER NOT NULL DEFAULT 0,              -- copies held back by the transmit budget, in all
  CHECK ((kind = 'message') = (msgno IS NOT NULL))
);
INSERT INTO sends_new (message_id, station, addressee, kind, msgno, client_id, state, created_at, transmissions,
                       last_sent_at, next_at, expires_at, finished_at, budget_delay_ms)
  SELECT message_id, station, addressee, 'message', msgno, client_id, state, created_at, transmissions,
         last_sent_at, next_at, expires_at, finished_at, budget_delay_ms
  FROM sends;
DROP TABLE sends;
ALTER TABLE sends_new RENAME TO sends;
-- A message number is unique among the station's messages in flight (so an answer stops exactly one).
CREATE UNIQUE INDEX sends_in_flight ON sends (station, msgno) WHERE state = 'pending';
-- `clientId` makes a send idempotent (and cancellable) for as long as its message is kept.
CREATE UNIQUE INDEX sends_client_id ON sends (station, client_id) WHERE client_id IS NOT NULL;
CREATE INDEX sends_next ON sends (next_at) WHERE state = 'pending';
CREATE INDEX sends_expiry ON sends (expires_at) WHERE state = 'pending';

-- When each station's bulletins and announcements were accepted, for `[send] bulletinsPerDay` (a sliding 24 h):
-- kept apart from `sends`, whose rows go with their messages when the station's ring is trimmed. Rows older than
-- a day are deleted as new ones come.
CREATE TABLE bulletin_log (
  station     TEXT NOT NULL CHECK (station <> '' AND station = upper(station)),
  accepted_at INTEGER NOT NULL
);
CREATE INDEX bulletin_log_station ON bulletin_log (station, accepted_at);
CREATE INDEX bulletin_log_age ON bulletin_log (accepted_at);
