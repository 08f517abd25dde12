-- catalog-db 0003_add_sellers_payout_schedule_idx
CREATE INDEX CONCURRENTLY IF NOT EXISTS sellers_payout_schedule_idx ON sellers (payout_schedule);
