-- orders-db 0004_drop_unused_payouts_failure_reason_idx
-- pg_stat_user_indexes shows idx_scan = 0 for payouts_failure_reason_idx on the primary too.
DROP INDEX CONCURRENTLY IF EXISTS payouts_failure_reason_idx;
