-- orders-db 0003_narrow_orders_pending_created_idx
-- Smaller index: EXPIRE_PENDING compares created_at by a strict operator, so it never reads
-- the rows where it is NULL.
CREATE INDEX CONCURRENTLY orders_pending_created_idx_new ON orders (created_at) WHERE status = 'pending' AND created_at IS NOT NULL;
DROP INDEX CONCURRENTLY orders_pending_created_idx;
ALTER INDEX orders_pending_created_idx_new RENAME TO orders_pending_created_idx;
