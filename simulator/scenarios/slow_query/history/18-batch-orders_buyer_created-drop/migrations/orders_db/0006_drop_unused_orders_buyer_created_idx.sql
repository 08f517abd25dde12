-- orders-db 0006_drop_unused_orders_buyer_created_idx
-- pg_stat_user_indexes shows idx_scan = 0 for orders_buyer_created_idx: dead weight on every write.
DROP INDEX CONCURRENTLY IF EXISTS orders_buyer_created_idx;
