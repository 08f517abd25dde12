-- catalog-db 0008_reindex_reviews_listing_created_idx
-- reviews_listing_created_idx is 40% bloat; rebuild it without taking a write lock.
DROP INDEX CONCURRENTLY reviews_listing_created_idx;
CREATE INDEX CONCURRENTLY reviews_listing_created_idx ON reviews (listing_id, created_at DESC);
