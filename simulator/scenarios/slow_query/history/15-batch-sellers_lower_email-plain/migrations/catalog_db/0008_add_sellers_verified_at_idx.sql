-- catalog-db 0008_add_sellers_verified_at_idx
CREATE INDEX CONCURRENTLY IF NOT EXISTS sellers_verified_at_idx ON sellers (verified_at);
