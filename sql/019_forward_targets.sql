-- A claimed station's forward targets (POST /v1/settings `forward`, at most 5; docs/api.md "Forwarding"): where the
-- push sender also delivers the station's received messages. `kind` email (address = the mail address),
-- ntfy or webhook (address = the https:// URL). `secret`: the webhook's HMAC key or the ntfy access token (NULL
-- for none); never answered in full. `status`: active, unconfirmed (an email address that has not entered its
-- code: it gets only confirmation mails) or disabled (with `reason` and `disabled_at`: 404/410, an SMTP 5xx for
-- the address, a private address at connect).
-- Confirmation of an email target: `confirm_due` 1 while a confirmation mail with a new code is to be sent, 2 while
-- the last one is to be sent again after a passing failure (the push sender makes the 6-digit code and keeps it in
-- `confirm_code` until `confirm_expires_at`; the mails one address gets are counted in `rate_limits`, at most 3 in
-- 24 hours whatever station asks); `confirm_wrong` counts wrong codes (5 void the code).
-- `id` is the server's (`f` + base-36 digits), kept while the target exists. Deleted with the station.
CREATE TABLE forward_targets (
  station            TEXT NOT NULL REFERENCES stations (address) ON DELETE CASCADE,
  id                 TEXT NOT NULL CHECK (id <> ''),
  position           INTEGER NOT NULL,
  kind               TEXT NOT NULL CHECK (kind IN ('email', 'ntfy', 'webhook')),
  address            TEXT NOT NULL CHECK (address <> ''),
  secret             TEXT,
  priority           INTEGER NOT NULL DEFAULT 4 CHECK (priority BETWEEN 1 AND 5),
  always             INTEGER NOT NULL DEFAULT 0,
  status             TEXT NOT NULL CHECK (status IN ('active', 'unconfirmed', 'disabled')),
  reason             TEXT,
  disabled_at        INTEGER,
  confirm_due        INTEGER NOT NULL DEFAULT 0,
  confirm_code       TEXT,
  confirm_expires_at INTEGER,
  confirm_wrong      INTEGER NOT NULL DEFAULT 0,
  created_at         INTEGER NOT NULL,
  PRIMARY KEY (station, id)
) WITHOUT ROWID;
CREATE INDEX forward_targets_confirm_due ON forward_targets (confirm_due) WHERE confirm_due > 0;
