-- catalog-db 0005_drop_unused_listings_lower_title_idx
-- pg_stat_user_indexes shows idx_scan = 0 for listings_lower_title_idx: dead weight on every write.
DROP INDEX CONCURRENTLY IF EXISTS listings_lower_title_idx;
