-- catalog-db 0006_reindex_reviews_listing_created_idx
-- reviews_listing_created_idx is bloated; rebuild it as it is, without a write lock.
REINDEX INDEX CONCURRENTLY reviews_listing_created_idx;
