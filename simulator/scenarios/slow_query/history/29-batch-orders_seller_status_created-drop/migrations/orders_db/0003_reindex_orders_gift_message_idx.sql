-- orders-db 0003_reindex_orders_gift_message_idx
-- orders_gift_message_idx is bloated; rebuild it as it is, without a write lock.
REINDEX INDEX CONCURRENTLY orders_gift_message_idx;
