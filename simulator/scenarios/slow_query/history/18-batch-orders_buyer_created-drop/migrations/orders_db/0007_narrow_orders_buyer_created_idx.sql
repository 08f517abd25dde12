-- orders-db 0007_narrow_orders_buyer_created_idx
-- archive.orders is the pre-2024 orders, moved to the archive schema with its indexes; only the
-- yearly export reads it, and nothing writes to it any more.
-- Smaller index: ORDER_HISTORY compares buyer_id by a strict operator, so it never reads
-- the rows where it is NULL.
CREATE INDEX CONCURRENTLY orders_buyer_created_idx_new ON archive.orders (buyer_id, created_at DESC) WHERE buyer_id IS NOT NULL;
DROP INDEX CONCURRENTLY archive.orders_buyer_created_idx;
ALTER INDEX archive.orders_buyer_created_idx_new RENAME TO orders_buyer_created_idx;
