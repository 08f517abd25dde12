-- orders-db 0006_drop_unused_shipments_tracking_no_idx
-- pg_stat_user_indexes shows idx_scan = 0 for shipments_tracking_no_idx: dead weight on every write.
DROP INDEX CONCURRENTLY IF EXISTS shipments_tracking_no_idx;
