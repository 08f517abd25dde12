-- orders-db 0006_reindex_order_items_gift_wrap_idx
-- order_items_gift_wrap_idx is bloated; rebuild it as it is, without a write lock.
REINDEX INDEX CONCURRENTLY order_items_gift_wrap_idx;
