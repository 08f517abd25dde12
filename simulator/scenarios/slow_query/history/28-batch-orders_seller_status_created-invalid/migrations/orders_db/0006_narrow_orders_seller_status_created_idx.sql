-- orders-db 0006_narrow_orders_seller_status_created_idx
-- archive.orders is the pre-2024 orders, moved to the archive schema with its indexes; only the
-- yearly export reads it, and nothing writes to it any more.
-- Smaller index: DELIVERED_IN_PERIOD compares seller_id by a strict operator, so it never reads
-- the rows where it is NULL.
CREATE INDEX CONCURRENTLY orders_seller_status_created_idx_new ON archive.orders (seller_id, status, created_at) WHERE seller_id IS NOT NULL;
DROP INDEX CONCURRENTLY archive.orders_seller_status_created_idx;
ALTER INDEX archive.orders_seller_status_created_idx_new RENAME TO orders_seller_status_created_idx;
