-- orders-db 0005_reindex_orders_seller_status_created_idx
-- archive.orders is the pre-2024 orders, moved to the archive schema with its indexes; only the
-- yearly export reads it, and nothing writes to it any more.
-- archive.orders_seller_status_created_idx is bloated; rebuild it as it is, without a write lock.
REINDEX INDEX CONCURRENTLY archive.orders_seller_status_created_idx;
