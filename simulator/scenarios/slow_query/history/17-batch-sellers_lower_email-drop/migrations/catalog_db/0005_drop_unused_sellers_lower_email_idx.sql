-- catalog-db 0005_drop_unused_sellers_lower_email_idx
-- pg_stat_user_indexes shows idx_scan = 0 for sellers_lower_email_idx: dead weight on every write.
DROP INDEX CONCURRENTLY IF EXISTS sellers_lower_email_idx;
