-- Outbound messages (/v1/send): the phone hands a message to the server, the listener transmits it on APRS-IS
-- and retransmits it on a decaying schedule until the addressee answers (ack, rej or a reply-ack) or the
-- schedule runs out. The message itself is a `messages` row (direction 'sent', peer = the addressee, msgno =
-- its message number), so sync shows it like any other; this row holds its schedule and state. A state change
-- gives the message row a new timestamp (the cursor rule), so a client following the cursor sees it again.
--
-- `next_at` and `expires_at` are NULL until the listener first schedules the row (the responder only writes
-- the request; the schedule is the listener's `[send] schedule`). A transmission is recorded here (count, time,
-- next due time) before its line is written to the socket, so a crash can lose a copy but never repeat a burst.
CREATE TABLE sends (
  message_id    INTEGER PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,
  station       TEXT NOT NULL CHECK (station <> '' AND station = upper(station)),  -- the sender
  addressee     TEXT NOT NULL CHECK (addressee <> '' AND addressee = upper(addressee)),
  msgno         TEXT NOT NULL CHECK (length(msgno) BETWEEN 1 AND 5 AND msgno NOT GLOB '*[^A-Za-z0-9]*'),
  client_id     TEXT,                                      -- the caller's idempotency key, if given
  state         TEXT NOT NULL DEFAULT 'pending'
                CHECK (state IN ('pending', 'acked', 'rejected', 'expired')),
  created_at    INTEGER NOT NULL,                          -- accepted; the schedule counts from here
  transmissions INTEGER NOT NULL DEFAULT 0,                -- copies recorded as written
  last_sent_at  INTEGER,                                   -- when the last copy was recorded
  next_at       INTEGER,                                   -- the next copy is due (NULL: none left, or finished)
  expires_at    INTEGER,                                   -- no answer by then: expired
  finished_at   INTEGER                                    -- when the state left 'pending'
);
-- A message number is unique among the station's messages in flight (so an answer stops exactly one).
CREATE UNIQUE INDEX sends_in_flight ON sends (station, msgno) WHERE state = 'pending';
-- `clientId` makes a send idempotent for as long as its message is kept.
CREATE UNIQUE INDEX sends_client_id ON sends (station, client_id) WHERE client_id IS NOT NULL;
CREATE INDEX sends_next ON sends (next_at) WHERE state = 'pending';
CREATE INDEX sends_expiry ON sends (expires_at) WHERE state = 'pending';

-- The last message number given to each station's sends (1-99999, wrapping). Not deleted with the station, so a
-- station that registers again does not restart at 1 (receivers remember recent numbers of a sender).
CREATE TABLE send_numbers (
  station TEXT PRIMARY KEY NOT NULL,
  last    INTEGER NOT NULL
) WITHOUT ROWID;
