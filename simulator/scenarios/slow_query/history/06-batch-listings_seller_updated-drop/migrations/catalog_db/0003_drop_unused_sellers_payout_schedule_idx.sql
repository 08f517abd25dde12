-- catalog-db 0003_drop_unused_sellers_payout_schedule_idx
-- pg_stat_user_indexes shows idx_scan = 0 for sellers_payout_schedule_idx on the primary too.
DROP INDEX CONCURRENTLY IF EXISTS sellers_payout_schedule_idx;
