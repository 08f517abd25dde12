-- catalog-db 0005_reindex_sellers_payout_schedule_idx
-- sellers_payout_schedule_idx is bloated; rebuild it as it is, without a write lock.
REINDEX INDEX CONCURRENTLY sellers_payout_schedule_idx;
