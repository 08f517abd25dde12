-- orders-db 0007_drop_unused_orders_promo_code_idx
-- pg_stat_user_indexes shows idx_scan = 0 for orders_promo_code_idx on the primary too.
DROP INDEX CONCURRENTLY IF EXISTS orders_promo_code_idx;
