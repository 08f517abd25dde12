-- catalog-db 0005_reindex_listings_lower_title_idx
-- listings_lower_title_idx is bloated; rebuild it as it is, without a write lock.
REINDEX INDEX CONCURRENTLY listings_lower_title_idx;
