-- orders-db 0005_reindex_order_items_order_id_idx
-- order_items_order_id_idx is bloated; rebuild it as it is, without a write lock.
REINDEX INDEX CONCURRENTLY order_items_order_id_idx;
