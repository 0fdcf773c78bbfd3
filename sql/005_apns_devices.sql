-- APNs device tokens are hex and stored lower case, so one device is one row (the app sends them in upper
-- case). Tokens that differ only by case are merged: the most recently refreshed row wins (the station that
-- heard from the device last keeps it, as a token registered by another station moves there).
-- A token that, lower-cased, equals another platform's token is merged the same way (a UNIQUE token stays
-- unique).
DELETE FROM devices WHERE id IN (
  SELECT id FROM (
    SELECT id, row_number() OVER (
      PARTITION BY CASE WHEN platform = 'ios' THEN lower(token) ELSE token END
      ORDER BY refreshed_at DESC, id DESC) AS rank
    FROM devices)
  WHERE rank > 1);
UPDATE devices SET token = lower(token) WHERE platform = 'ios' AND token <> lower(token);

-- The APNs environment that last accepted an iOS device's token ('production' or 'sandbox'); NULL until one
-- did (the sender then tries `[messaging.ios.apns] production` first).
ALTER TABLE devices ADD COLUMN apns_environment TEXT
  CHECK (apns_environment IS NULL OR apns_environment IN ('production', 'sandbox'));

-- The APNs provider token no longer lives in the database the responder reads (the listener keeps it in
-- memory and in a 0600 file of its own).
DELETE FROM meta WHERE key = 'push.ios.providerToken';
