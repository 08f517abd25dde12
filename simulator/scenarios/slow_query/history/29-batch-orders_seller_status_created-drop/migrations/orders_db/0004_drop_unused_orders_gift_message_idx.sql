-- orders-db 0004_drop_unused_orders_gift_message_idx
-- pg_stat_user_indexes shows idx_scan = 0 for orders_gift_message_idx on the primary too.
DROP INDEX CONCURRENTLY IF EXISTS orders_gift_message_idx;
