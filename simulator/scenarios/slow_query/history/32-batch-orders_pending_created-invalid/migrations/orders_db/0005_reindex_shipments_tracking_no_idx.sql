-- orders-db 0005_reindex_shipments_tracking_no_idx
-- shipments_tracking_no_idx is bloated; rebuild it as it is, without a write lock.
REINDEX INDEX CONCURRENTLY shipments_tracking_no_idx;
