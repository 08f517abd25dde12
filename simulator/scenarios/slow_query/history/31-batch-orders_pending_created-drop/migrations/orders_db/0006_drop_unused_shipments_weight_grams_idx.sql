-- orders-db 0006_drop_unused_shipments_weight_grams_idx
-- pg_stat_user_indexes shows idx_scan = 0 for shipments_weight_grams_idx on the primary too.
DROP INDEX CONCURRENTLY IF EXISTS shipments_weight_grams_idx;
