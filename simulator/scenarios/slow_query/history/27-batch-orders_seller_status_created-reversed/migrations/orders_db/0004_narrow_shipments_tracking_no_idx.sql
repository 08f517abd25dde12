-- orders-db 0004_narrow_shipments_tracking_no_idx
-- Smaller index: TRACKING_LOOKUP compares tracking_no by a strict operator, so it never reads
-- the rows where it is NULL.
CREATE UNIQUE INDEX CONCURRENTLY shipments_tracking_no_idx_new ON shipments (tracking_no) WHERE tracking_no IS NOT NULL;
DROP INDEX CONCURRENTLY shipments_tracking_no_idx;
ALTER INDEX shipments_tracking_no_idx_new RENAME TO shipments_tracking_no_idx;
