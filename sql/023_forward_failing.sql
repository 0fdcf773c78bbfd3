-- Forward targets that fail for a passing reason, and the class of every reason (docs/api.md "Forwarding (email, ntfy, webhooks)", the tables of
-- answers per channel). `failing_since` (epoch ms) is set while an active target's forwards fail for a passing
-- reason (a full mailbox, an SMTP 4xx, an HTTP redirect, a 5xx, a 429, no answer); `reason` then holds what the
-- service answered, and the settings answer shows the target `failing`. The next delivery clears both: the target
-- is active again without a new confirmation. `reason_code` is the class of the reason of a failing or disabled
-- target (`auth_refused`, `gone`, `address_refused`, `private_address`, `redirect`, `throttled`, `mailbox_full`,
-- `mail_deferred`, `mail_server`, `server_error`, `no_answer`), NULL for an active one and for a target disabled
-- before this migration; `/metrics` counts the targets by it.
ALTER TABLE forward_targets ADD COLUMN failing_since INTEGER;
ALTER TABLE forward_targets ADD COLUMN reason_code TEXT;
