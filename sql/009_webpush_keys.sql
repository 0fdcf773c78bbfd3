-- Web Push and UnifiedPush subscriptions (`devices.platform` 'webpush' or 'unifiedpush'): the token is the push
-- service's endpoint URL and these are the subscription's keys from `PushSubscription.toJSON()`, as unpadded
-- base64url text: `push_p256dh` the user agent's public key (a 65-byte uncompressed P-256 point) and `push_auth`
-- its 16-byte authentication secret (RFC 8291). Both NULL for every other platform, and for a UnifiedPush
-- endpoint registered without keys (its pushes then go unencrypted).
ALTER TABLE devices ADD COLUMN push_p256dh TEXT CHECK (push_p256dh IS NULL OR length(push_p256dh) = 87);
ALTER TABLE devices ADD COLUMN push_auth TEXT CHECK (push_auth IS NULL OR length(push_auth) = 22);
