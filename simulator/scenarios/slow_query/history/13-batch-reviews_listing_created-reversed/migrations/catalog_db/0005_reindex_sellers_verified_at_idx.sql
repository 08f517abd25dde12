-- catalog-db 0005_reindex_sellers_verified_at_idx
-- sellers_verified_at_idx is bloated; rebuild it as it is, without a write lock.
REINDEX INDEX CONCURRENTLY sellers_verified_at_idx;
