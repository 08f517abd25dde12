-- orders-db 0006_reindex_shipments_order_id_idx
-- shipments_order_id_idx is 40% bloat; rebuild it without taking a write lock.
DROP INDEX CONCURRENTLY shipments_order_id_idx;
CREATE INDEX CONCURRENTLY shipments_order_id_idx ON shipments (order_id);
