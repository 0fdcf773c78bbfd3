-- Placeholder for migration 009, which another change in flight defines. Migrations are numbered without
-- gaps, so this branch carries an empty 009 until that change lands; the real file replaces this one.
SELECT 1;
