-- catalog-db 0008_reindex_listings_language_idx
-- listings_language_idx is bloated; rebuild it as it is, without a write lock.
REINDEX INDEX CONCURRENTLY listings_language_idx;
