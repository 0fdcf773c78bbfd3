-- The change log of the station set, for the listener: one row per station added, removed or heard from
-- (register or heartbeat), in commit order. The listener reads the rows after the last one it read and
-- looks those stations up, instead of reading every station again on each commit. `seq` never goes back
-- (AUTOINCREMENT; writers are serialised, so rows commit in `seq` order), and rows are only ever deleted
-- from the oldest end: by the listener once it read them, and here, which keeps the newest 100,000. A
-- listener that finds rows it never read gone (it fell that far behind, or the table was emptied) reads
-- the whole set once instead. Expiry needs no rows: the listener finds stations whose heartbeat crossed
-- the expiry boundary with a range query on `stations_heartbeat`.
CREATE TABLE station_changes (
  seq     INTEGER PRIMARY KEY AUTOINCREMENT,
  address TEXT NOT NULL
);

CREATE TRIGGER station_changes_on_insert AFTER INSERT ON stations
BEGIN
  INSERT INTO station_changes (address) VALUES (new.address);
  DELETE FROM station_changes WHERE seq <= last_insert_rowid() - 100000;
END;

CREATE TRIGGER station_changes_on_heartbeat AFTER UPDATE OF heartbeat_at ON stations
BEGIN
  INSERT INTO station_changes (address) VALUES (new.address);
  DELETE FROM station_changes WHERE seq <= last_insert_rowid() - 100000;
END;

CREATE TRIGGER station_changes_on_delete AFTER DELETE ON stations
BEGIN
  INSERT INTO station_changes (address) VALUES (old.address);
  DELETE FROM station_changes WHERE seq <= last_insert_rowid() - 100000;
END;
