-- orders-db 0003_reindex_shipments_tracking_no_idx
-- shipments_tracking_no_idx is 40% bloat; rebuild it without taking a write lock.
DROP INDEX CONCURRENTLY shipments_tracking_no_idx;
CREATE UNIQUE INDEX CONCURRENTLY shipments_tracking_no_idx ON shipments (tracking_no);
