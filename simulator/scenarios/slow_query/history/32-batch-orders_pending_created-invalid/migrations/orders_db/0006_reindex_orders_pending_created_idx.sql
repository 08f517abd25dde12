-- orders-db 0006_reindex_orders_pending_created_idx
-- orders_pending_created_idx is 40% bloat; rebuild it without taking a write lock.
DROP INDEX CONCURRENTLY orders_pending_created_idx;
CREATE INDEX CONCURRENTLY orders_pending_created_idx ON orders (created_at) WHERE status = 'pending';
