-- Hearing the station's own radio (docs/design.md "Hearing the station's own radio", docs/protocol.md "Station
-- settings"): the settings `ackPolicy:"fallback"`, `fallbackWait`, `airAnswered` and `trackSent`, and what the
-- listener learnt of a message's answer.
--
-- `ackPolicy:"fallback"` is stored as `stations.ack_policy = 'server'` with `ack_fallback = 1` (the CHECK of
-- `ack_policy` stays as it is): a listener of an older build, or a station the filter has no room for, ACKs such a
-- station's messages at once, as `server` does. Never a missing ACK. Any other policy written to `ack_policy`
-- clears the flag (the trigger below), so a policy set by register's `ackMessages` or by hand is what it says.
-- `own_since` (epoch ms) is when the station first asked the listener to follow its own transmissions (`fallback`
-- or `trackSent` switched on), NULL while it asks for neither: the oldest request has precedence for the filter's
-- bytes.
ALTER TABLE station_settings ADD COLUMN ack_fallback INTEGER NOT NULL DEFAULT 0 CHECK (ack_fallback IN (0, 1));
ALTER TABLE station_settings ADD COLUMN fallback_wait INTEGER NOT NULL DEFAULT 20
  CHECK (fallback_wait BETWEEN 1 AND 60);                  -- seconds the ACK waits for the station's own
ALTER TABLE station_settings ADD COLUMN air_answered TEXT NOT NULL DEFAULT 'quiet'
  CHECK (air_answered IN ('push', 'quiet', 'none'));       -- the push of a message the station's radio answered
ALTER TABLE station_settings ADD COLUMN track_sent INTEGER NOT NULL DEFAULT 0 CHECK (track_sent IN (0, 1));
ALTER TABLE station_settings ADD COLUMN own_since INTEGER;
CREATE INDEX station_settings_own ON station_settings (station) WHERE own_since IS NOT NULL;

CREATE TRIGGER stations_ack_policy_clears_fallback AFTER UPDATE OF ack_policy ON stations
WHEN new.ack_policy <> 'server'
BEGIN
  UPDATE station_settings SET ack_fallback = 0,
    own_since = CASE WHEN track_sent = 1 THEN own_since END
  WHERE station = new.address AND ack_fallback = 1;
END;

-- 'air': the station's own radio answered the message (its `ack` or `rej`, heard through an igate, within the
-- wait), so the server sent no ACK. NULL otherwise.
ALTER TABLE messages ADD COLUMN answered_by TEXT CHECK (answered_by IN ('air'));

-- `trackSent`: a message the station's radio or another app of its own sent, heard on APRS-IS, stored as a `sent`
-- entry: 'sent' until its peer's ack or rej (correlated by the message number) makes it 'acked' or 'rejected'.
-- NULL for every other entry (a `/v1/send` has its state in `sends`; operator-wide outgoing tracking keeps none).
-- Such entries are shown only to `want:["sent"]` clients.
ALTER TABLE messages ADD COLUMN heard_state TEXT CHECK (heard_state IN ('sent', 'acked', 'rejected'));
