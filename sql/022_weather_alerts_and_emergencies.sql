-- Weather alerts continued and emergencies reported anywhere in a packet.
--
-- `watch_states.emergency_at`: when the watched call last reported an emergency (epoch ms; NULL: none, or a
-- Mic-E report of another code ended it). Another report within 2 h of it is the same emergency (`WatchTracker`).
-- It replaces the flags `mic_e_emergency` and `status_emergency`, no longer read or written (they stay, at their
-- default 0: dropping a column needs SQLite 3.35). A watch in an emergency when this runs keeps it, from when
-- the call was last heard, so the upgrade reports no emergency twice.
ALTER TABLE watch_states ADD COLUMN emergency_at INTEGER;
UPDATE watch_states SET emergency_at = last_heard_at WHERE mic_e_emergency = 1 OR status_emergency = 1;
UPDATE watch_states SET mic_e_emergency = 0, status_emergency = 0;

-- The NWS entries by sender and `{` number: a line that continues an alert (`SKYRIW :… {JBNBB`) is stored for
-- the stations the alert was stored for, found by the alert's identity (sender, first four characters of the
-- number: `WeatherAlertIdentity`).
CREATE INDEX messages_alerts ON messages (peer, msgno) WHERE kind = 'nws';
