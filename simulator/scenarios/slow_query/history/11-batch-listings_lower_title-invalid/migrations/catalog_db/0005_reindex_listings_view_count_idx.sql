-- catalog-db 0005_reindex_listings_view_count_idx
-- listings_view_count_idx is bloated; rebuild it as it is, without a write lock.
REINDEX INDEX CONCURRENTLY listings_view_count_idx;
