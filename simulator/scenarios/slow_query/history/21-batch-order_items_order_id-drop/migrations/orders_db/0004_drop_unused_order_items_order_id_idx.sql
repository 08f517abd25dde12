-- orders-db 0004_drop_unused_order_items_order_id_idx
-- pg_stat_user_indexes shows idx_scan = 0 for order_items_order_id_idx: dead weight on every write.
DROP INDEX CONCURRENTLY IF EXISTS order_items_order_id_idx;
