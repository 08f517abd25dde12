-- orders-db 0007_narrow_orders_buyer_created_idx
-- Smaller index: ORDER_HISTORY compares buyer_id by a strict operator, so it never reads
-- the rows where it is NULL.
CREATE INDEX CONCURRENTLY orders_buyer_created_idx_new ON orders (buyer_id, created_at DESC) WHERE buyer_id IS NOT NULL;
DROP INDEX CONCURRENTLY orders_buyer_created_idx;
ALTER INDEX orders_buyer_created_idx_new RENAME TO orders_buyer_created_idx;
