-- orders-db 0006_drop_unused_orders_cancelled_at_idx
-- pg_stat_user_indexes shows idx_scan = 0 for orders_cancelled_at_idx on the primary too.
DROP INDEX CONCURRENTLY IF EXISTS orders_cancelled_at_idx;
