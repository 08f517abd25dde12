-- orders-db 0006_simplify_orders_seller_status_created_idx
-- archive.orders is the pre-2024 orders, moved to the archive schema with its indexes; only the
-- yearly export reads it, and nothing writes to it any more.
ALTER INDEX archive.orders_seller_status_created_idx SET (fillfactor = 100);
REINDEX INDEX CONCURRENTLY archive.orders_seller_status_created_idx;
