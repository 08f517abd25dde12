-- catalog-db 0005_drop_unused_reviews_reply_text_idx
-- pg_stat_user_indexes shows idx_scan = 0 for reviews_reply_text_idx on the primary too.
DROP INDEX CONCURRENTLY IF EXISTS reviews_reply_text_idx;
