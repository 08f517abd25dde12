-- orders-db 0003_drop_unused_orders_pending_created_idx
-- archive.orders is the pre-2024 orders, moved to the archive schema with its indexes
-- (ALTER TABLE ... SET SCHEMA keeps their names); only the yearly export reads it,
-- and pg_stat_user_indexes shows idx_scan = 0 for archive.orders_pending_created_idx.
DROP INDEX CONCURRENTLY IF EXISTS archive.orders_pending_created_idx;
