-- catalog-db 0008_drop_unused_listings_view_count_idx
-- pg_stat_user_indexes shows idx_scan = 0 for listings_view_count_idx on the primary too.
DROP INDEX CONCURRENTLY IF EXISTS listings_view_count_idx;
