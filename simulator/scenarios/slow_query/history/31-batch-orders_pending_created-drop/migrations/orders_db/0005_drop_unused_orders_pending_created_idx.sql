-- orders-db 0005_drop_unused_orders_pending_created_idx
-- pg_stat_user_indexes shows idx_scan = 0 for orders_pending_created_idx: dead weight on every write.
DROP INDEX CONCURRENTLY IF EXISTS orders_pending_created_idx;
