-- catalog-db 0006_listings_price_category_idx
-- One index for both the per-key lookups and the time-range reports.
CREATE INDEX CONCURRENTLY listings_price_category_idx ON listings (price_cents, category_id) WHERE status = 'active';
DROP INDEX CONCURRENTLY listings_category_price_idx;
