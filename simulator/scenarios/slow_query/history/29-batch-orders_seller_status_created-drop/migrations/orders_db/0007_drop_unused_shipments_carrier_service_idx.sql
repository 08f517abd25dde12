-- orders-db 0007_drop_unused_shipments_carrier_service_idx
-- pg_stat_user_indexes shows idx_scan = 0 for shipments_carrier_service_idx on the primary too.
DROP INDEX CONCURRENTLY IF EXISTS shipments_carrier_service_idx;
