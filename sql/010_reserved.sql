-- Reserved: number 010 belongs to the station keys migration. This placeholder keeps the numbering
-- without gaps until it lands, and is replaced by it (never ship both).
SELECT 1;
