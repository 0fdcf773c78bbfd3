-- Delivery receipts: acks and rejs that APRS-IS carried to a registered station, for messages that
-- station sent (recorded by the listener, never stored as messages). One row per station, peer,
-- message number and kind; a repeated copy only moves `received_at` (message numbers wrap, so the
-- newest sighting is what counts). Kept about a week (the listener prunes older rows).
CREATE TABLE receipts (
  id          INTEGER PRIMARY KEY,
  station     TEXT NOT NULL REFERENCES stations (address) ON DELETE CASCADE,
  peer        TEXT NOT NULL,                               -- who sent the ack or rej
  msgno       TEXT NOT NULL,                               -- the message number it answers
  kind        TEXT NOT NULL CHECK (kind IN ('ack', 'rej')),
  reply_ack   TEXT,                                        -- the `}AA` of a reply-ack, if any
  received_at INTEGER NOT NULL,
  UNIQUE (station, peer, msgno, kind)
);
CREATE INDEX receipts_received ON receipts (received_at);
