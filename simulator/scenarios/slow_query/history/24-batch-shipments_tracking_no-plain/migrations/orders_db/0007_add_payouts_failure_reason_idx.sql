-- orders-db 0007_add_payouts_failure_reason_idx
CREATE INDEX CONCURRENTLY IF NOT EXISTS payouts_failure_reason_idx ON payouts (failure_reason);
