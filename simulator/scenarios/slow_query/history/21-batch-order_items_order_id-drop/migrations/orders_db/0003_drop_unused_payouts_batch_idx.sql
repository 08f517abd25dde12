-- orders-db 0003_drop_unused_payouts_batch_idx
-- pg_stat_user_indexes shows idx_scan = 0 for payouts_batch_idx on the primary too.
DROP INDEX CONCURRENTLY IF EXISTS payouts_batch_idx;
