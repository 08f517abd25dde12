-- orders-db 0003_reindex_orders_seller_status_created_idx
-- orders_seller_status_created_idx is bloated; rebuild it as it is, without a write lock.
REINDEX INDEX CONCURRENTLY orders_seller_status_created_idx;
