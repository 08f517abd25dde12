-- catalog-db 0003_drop_unused_sellers_verified_at_idx
-- pg_stat_user_indexes shows idx_scan = 0 for sellers_verified_at_idx on the primary too.
DROP INDEX CONCURRENTLY IF EXISTS sellers_verified_at_idx;
