-- orders-db 0003_reindex_order_items_returned_qty_idx
-- order_items_returned_qty_idx is bloated; rebuild it as it is, without a write lock.
REINDEX INDEX CONCURRENTLY order_items_returned_qty_idx;
