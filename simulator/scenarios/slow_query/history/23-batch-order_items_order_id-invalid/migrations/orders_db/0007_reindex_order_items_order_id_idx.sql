-- orders-db 0007_reindex_order_items_order_id_idx
-- order_items_order_id_idx is 40% bloat; rebuild it without taking a write lock.
DROP INDEX CONCURRENTLY order_items_order_id_idx;
CREATE INDEX CONCURRENTLY order_items_order_id_idx ON order_items (order_id);
