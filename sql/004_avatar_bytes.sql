-- The bytes of every stored avatar image, kept as a running total so the responder can hold
-- `[limits] avatarBytesTotal` without summing the images on each upload. `meta.avatar_bytes` is
-- the sum of length(avatar_image) in bytes over all stations (images are base64 text); the
-- triggers keep it exact through every insert, update and delete (pruning and unregister too).
INSERT INTO meta (key, value)
  SELECT 'avatar_bytes', CAST(coalesce(sum(length(CAST(avatar_image AS BLOB))), 0) AS TEXT) FROM stations;

CREATE TRIGGER stations_avatar_bytes_insert AFTER INSERT ON stations
  WHEN new.avatar_image IS NOT NULL
BEGIN
  UPDATE meta SET value = CAST(CAST(value AS INTEGER) + length(CAST(new.avatar_image AS BLOB)) AS TEXT)
  WHERE key = 'avatar_bytes';
END;

CREATE TRIGGER stations_avatar_bytes_update AFTER UPDATE OF avatar_image ON stations
  WHEN new.avatar_image IS NOT old.avatar_image
BEGIN
  UPDATE meta SET value = CAST(CAST(value AS INTEGER)
      + coalesce(length(CAST(new.avatar_image AS BLOB)), 0)
      - coalesce(length(CAST(old.avatar_image AS BLOB)), 0) AS TEXT)
  WHERE key = 'avatar_bytes';
END;

CREATE TRIGGER stations_avatar_bytes_delete AFTER DELETE ON stations
  WHEN old.avatar_image IS NOT NULL
BEGIN
  UPDATE meta SET value = CAST(CAST(value AS INTEGER) - length(CAST(old.avatar_image AS BLOB)) AS TEXT)
  WHERE key = 'avatar_bytes';
END;
