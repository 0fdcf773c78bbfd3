-- Sending within APRS-IS manners.
-- - A send can be cancelled by its station (`/v1/send` `cancel`), which stops its retries; it ends in the new
--   state 'cancelled'.
-- - `budget_delay_ms`: how long the listener's transmit budget (`[send] transmitBudgetPerMinute`) held this
--   send's copies back in all; its later copies (and its expiry) move by as much, so no copy of the schedule is
--   lost to the budget.
-- SQLite cannot change a CHECK constraint in place, so the table is rebuilt with the same rows and indexes (the
-- runner turns foreign keys off around migrations).
CREATE TABLE sends_new (
  message_id    INTEGER PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,
  station       TEXT NOT NULL CHECK (station <> '' AND station = upper(station)),  -- the sender
  addressee     TEXT NOT NULL CHECK (addressee <> '' AND addressee = upper(addressee)),
  msgno         TEXT NOT NULL CHECK (length(msgno) BETWEEN 1 AND 5 AND msgno NOT GLOB '*[^A-Za-z0-9]*'),
  client_id     TEXT,                                      -- the caller's idempotency key, if given
  state         TEXT NOT NULL DEFAULT 'pending'
                CHECK (state IN ('pending', 'acked', 'rejected', 'expired', 'cancelled')),
  created_at    INTEGER NOT NULL,                          -- accepted; the schedule counts from here
  transmissions INTEGER NOT NULL DEFAULT 0,                -- copies recorded as written
  last_sent_at  INTEGER,                                   -- when the last copy was recorded
  next_at       INTEGER,                                   -- the next copy is due (NULL: none left, or finished)
  expires_at    INTEGER,                                   -- no answer by then: expired
  finished_at   INTEGER,                                   -- when the state left 'pending'
  budget_delay_ms INTEGER NOT NULL DEFAULT 0               -- copies held back by the transmit budget, in all
);
INSERT INTO sends_new (message_id, station, addressee, msgno, client_id, state, created_at, transmissions,
                       last_sent_at, next_at, expires_at, finished_at)
  SELECT message_id, station, addressee, msgno, client_id, state, created_at, transmissions, last_sent_at,
         next_at, expires_at, finished_at
  FROM sends;
DROP TABLE sends;
ALTER TABLE sends_new RENAME TO sends;
-- A message number is unique among the station's messages in flight (so an answer stops exactly one).
CREATE UNIQUE INDEX sends_in_flight ON sends (station, msgno) WHERE state = 'pending';
-- `clientId` makes a send idempotent (and cancellable) for as long as its message is kept.
CREATE UNIQUE INDEX sends_client_id ON sends (station, client_id) WHERE client_id IS NOT NULL;
CREATE INDEX sends_next ON sends (next_at) WHERE state = 'pending';
CREATE INDEX sends_expiry ON sends (expires_at) WHERE state = 'pending';
