-- orders-db 0008_reindex_orders_buyer_created_idx
-- orders_buyer_created_idx is 40% bloat; rebuild it without taking a write lock.
DROP INDEX CONCURRENTLY orders_buyer_created_idx;
CREATE INDEX CONCURRENTLY orders_buyer_created_idx ON orders (buyer_id, created_at DESC);
