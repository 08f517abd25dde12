-- catalog-db 0007_drop_unused_listings_language_idx
-- pg_stat_user_indexes shows idx_scan = 0 for listings_language_idx on the primary too.
DROP INDEX CONCURRENTLY IF EXISTS listings_language_idx;
