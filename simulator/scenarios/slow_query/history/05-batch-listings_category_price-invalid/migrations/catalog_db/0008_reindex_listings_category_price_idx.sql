-- catalog-db 0008_reindex_listings_category_price_idx
-- listings_category_price_idx is 40% bloat; rebuild it without taking a write lock.
DROP INDEX CONCURRENTLY listings_category_price_idx;
CREATE INDEX CONCURRENTLY listings_category_price_idx ON listings (category_id, price_cents) WHERE status = 'active';
