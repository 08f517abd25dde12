-- orders-db 0004_drop_unused_orders_seller_status_created_idx
-- pg_stat_user_indexes shows idx_scan = 0 for orders_seller_status_created_idx: dead weight on every write.
DROP INDEX CONCURRENTLY IF EXISTS orders_seller_status_created_idx;
