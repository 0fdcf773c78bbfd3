-- Server-wide bans, the operator's (`aprs-cloud ban`, `unban`; docs/operating.md "Abuse controls"):
--   kind 'call':    an APRS sender. The listener drops its messages to every station (never stored, pushed,
--                   forwarded or ACKed), and /v1 calls for a station of that call get 403. A bare call bans
--                   every SSID of it; CALL-SSID only that one.
--   kind 'address': a client address block in CIDR form (203.0.113.7/32, 2001:db8:1:2::/64): every /v1 call
--                   from inside it but /v1/info gets 403.
-- A ban with `until` ends then (ms); NULL lasts until it is lifted. Expired rows are pruned by maintenance.
CREATE TABLE bans (
  kind       TEXT NOT NULL CHECK (kind IN ('call', 'address')),
  value      TEXT NOT NULL CHECK (value <> '' AND value = upper(value)),
  reason     TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  until      INTEGER,
  PRIMARY KEY (kind, value)
) WITHOUT ROWID;
