-- orders-db 0005_simplify_orders_buyer_created_idx
-- archive.orders is the pre-2024 orders, moved to the archive schema with its indexes; only the
-- yearly export reads it, and nothing writes to it any more.
ALTER INDEX archive.orders_buyer_created_idx SET (fillfactor = 100);
REINDEX INDEX CONCURRENTLY archive.orders_buyer_created_idx;
