-- catalog-db 0006_reindex_reviews_listing_id_idx
-- reviews_listing_id_idx is 35% bloat; rebuild it without taking a write lock.
DROP INDEX CONCURRENTLY reviews_listing_id_idx;
CREATE INDEX CONCURRENTLY reviews_listing_id_idx ON reviews (listing_id);
