-- catalog-db 0006_drop_unused_reviews_photo_count_idx
-- pg_stat_user_indexes shows idx_scan = 0 for reviews_photo_count_idx on the primary too.
DROP INDEX CONCURRENTLY IF EXISTS reviews_photo_count_idx;
