-- catalog-db 0006_reviews_created_listing_idx
-- The reviews reports range over created_at DESC first; reviews_listing_created_idx stays for the lookups.
CREATE INDEX CONCURRENTLY IF NOT EXISTS reviews_created_listing_idx ON reviews (created_at DESC, listing_id);
