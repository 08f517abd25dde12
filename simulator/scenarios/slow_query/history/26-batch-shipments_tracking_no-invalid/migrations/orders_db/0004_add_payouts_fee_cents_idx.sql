-- orders-db 0004_add_payouts_fee_cents_idx
CREATE INDEX CONCURRENTLY IF NOT EXISTS payouts_fee_cents_idx ON payouts (fee_cents);
