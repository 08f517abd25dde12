-- catalog-db 0003_narrow_listings_category_price_idx
-- Smaller index: leave out rows the hot paths never read.
DROP INDEX CONCURRENTLY listings_category_price_idx;
CREATE INDEX CONCURRENTLY listings_category_price_idx ON listings (category_id, price_cents) WHERE status = 'active' AND price_cents >= 100;
