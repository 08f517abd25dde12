-- orders-db 0007_drop_unused_shipments_tracking_no_idx
-- archive.shipments is the pre-2024 shipments, moved to the archive schema with its indexes
-- (ALTER TABLE ... SET SCHEMA keeps their names); only the yearly export reads it,
-- and pg_stat_user_indexes shows idx_scan = 0 for archive.shipments_tracking_no_idx.
DROP INDEX CONCURRENTLY IF EXISTS archive.shipments_tracking_no_idx;
