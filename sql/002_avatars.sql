-- Avatars, added to the live stations table as the original server did.
-- Never set: avatar_hash and avatar_cleared_at both NULL.
-- Set:       avatar_hash (and icon and/or image) present, avatar_cleared_at NULL.
-- Cleared:   avatar_cleared_at holds the clear time; nothing else is kept.
ALTER TABLE stations ADD COLUMN avatar_icon TEXT;
ALTER TABLE stations ADD COLUMN avatar_image TEXT;
ALTER TABLE stations ADD COLUMN avatar_hash TEXT CHECK (avatar_hash IS NULL OR avatar_hash <> '');
ALTER TABLE stations ADD COLUMN avatar_updated_at INTEGER;
ALTER TABLE stations ADD COLUMN avatar_cleared_at INTEGER;
