-- Reserved: migration 010 belongs to another branch (station claims, address widths). This placeholder only keeps
-- the numbering without gaps on this branch; the merge replaces it with that branch's migration.
SELECT 1;
