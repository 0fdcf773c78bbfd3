-- The number of stored stations (live or expired), kept as a running count so the responder can hold
-- `[limits] maxStations` on every new station without counting the table (a scan that grows with it).
-- `meta.station_count` starts from the rows there are; the triggers keep it exact through every insert
-- and delete (register, heartbeat re-creating a station, unregister, pruning, an operator's sqlite3).
-- An upsert that updates an existing row fires no insert trigger (the store never uses INSERT OR REPLACE on
-- stations, whose implied delete fires no delete trigger). A later migration that rebuilds the
-- stations table must re-create these triggers (they are dropped with the table).
INSERT INTO meta (key, value) SELECT 'station_count', CAST(count(*) AS TEXT) FROM stations WHERE true
  ON CONFLICT (key) DO UPDATE SET value = excluded.value;

CREATE TRIGGER stations_count_insert AFTER INSERT ON stations
BEGIN
  UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE key = 'station_count';
END;

CREATE TRIGGER stations_count_delete AFTER DELETE ON stations
BEGIN
  UPDATE meta SET value = CAST(CAST(value AS INTEGER) - 1 AS TEXT) WHERE key = 'station_count';
END;
