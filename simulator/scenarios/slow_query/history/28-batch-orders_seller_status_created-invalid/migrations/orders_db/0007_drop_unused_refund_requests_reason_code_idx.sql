-- orders-db 0007_drop_unused_refund_requests_reason_code_idx
-- pg_stat_user_indexes shows idx_scan = 0 for refund_requests_reason_code_idx on the primary too.
DROP INDEX CONCURRENTLY IF EXISTS refund_requests_reason_code_idx;
