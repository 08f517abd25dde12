-- orders-db 0004_reindex_orders_pending_created_idx
-- orders_pending_created_idx is bloated; rebuild it as it is, without a write lock.
REINDEX INDEX CONCURRENTLY orders_pending_created_idx;
