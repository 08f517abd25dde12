-- orders-db 0003_reindex_payouts_fee_cents_idx
-- payouts_fee_cents_idx is bloated; rebuild it as it is, without a write lock.
REINDEX INDEX CONCURRENTLY payouts_fee_cents_idx;
