-- orders-db 0004_reindex_orders_seller_status_created_idx
-- orders_seller_status_created_idx is 40% bloat; rebuild it without taking a write lock.
DROP INDEX CONCURRENTLY orders_seller_status_created_idx;
CREATE INDEX CONCURRENTLY orders_seller_status_created_idx ON orders (seller_id, status, created_at);
