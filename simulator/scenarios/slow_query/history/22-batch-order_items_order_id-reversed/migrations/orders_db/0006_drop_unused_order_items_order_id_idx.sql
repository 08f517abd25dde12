-- orders-db 0006_drop_unused_order_items_order_id_idx
-- archive.order_items is the pre-2024 order_items, moved to the archive schema with its indexes
-- (ALTER TABLE ... SET SCHEMA keeps their names); only the yearly export reads it,
-- and pg_stat_user_indexes shows idx_scan = 0 for archive.order_items_order_id_idx.
DROP INDEX CONCURRENTLY IF EXISTS archive.order_items_order_id_idx;
