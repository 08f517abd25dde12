-- catalog-db 0007_drop_unused_reviews_reported_at_idx
-- pg_stat_user_indexes shows idx_scan = 0 for reviews_reported_at_idx on the primary too.
DROP INDEX CONCURRENTLY IF EXISTS reviews_reported_at_idx;
