-- catalog-db 0007_reindex_listings_seller_updated_idx
-- listings_seller_updated_idx is 40% bloat; rebuild it without taking a write lock.
DROP INDEX CONCURRENTLY listings_seller_updated_idx;
CREATE INDEX CONCURRENTLY listings_seller_updated_idx ON listings (seller_id, updated_at DESC);
