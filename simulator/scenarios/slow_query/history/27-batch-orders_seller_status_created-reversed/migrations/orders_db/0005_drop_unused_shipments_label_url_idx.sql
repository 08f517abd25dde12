-- orders-db 0005_drop_unused_shipments_label_url_idx
-- pg_stat_user_indexes shows idx_scan = 0 for shipments_label_url_idx on the primary too.
DROP INDEX CONCURRENTLY IF EXISTS shipments_label_url_idx;
