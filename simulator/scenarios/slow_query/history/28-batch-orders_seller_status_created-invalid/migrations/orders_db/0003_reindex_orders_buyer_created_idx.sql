-- orders-db 0003_reindex_orders_buyer_created_idx
-- orders_buyer_created_idx is bloated; rebuild it as it is, without a write lock.
REINDEX INDEX CONCURRENTLY orders_buyer_created_idx;
