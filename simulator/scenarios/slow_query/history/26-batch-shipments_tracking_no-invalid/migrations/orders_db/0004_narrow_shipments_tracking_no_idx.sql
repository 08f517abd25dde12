-- orders-db 0004_narrow_shipments_tracking_no_idx
-- archive.shipments is the pre-2024 shipments, moved to the archive schema with its indexes; only the
-- yearly export reads it, and nothing writes to it any more.
-- Smaller index: TRACKING_LOOKUP compares tracking_no by a strict operator, so it never reads
-- the rows where it is NULL.
CREATE UNIQUE INDEX CONCURRENTLY shipments_tracking_no_idx_new ON archive.shipments (tracking_no) WHERE tracking_no IS NOT NULL;
DROP INDEX CONCURRENTLY archive.shipments_tracking_no_idx;
ALTER INDEX archive.shipments_tracking_no_idx_new RENAME TO shipments_tracking_no_idx;
