-- catalog-db 0003_drop_unused_reviews_listing_created_idx
-- pg_stat_user_indexes shows idx_scan = 0 for reviews_listing_created_idx: dead weight on every write.
DROP INDEX CONCURRENTLY IF EXISTS reviews_listing_created_idx;
