-- catalog-db 0004_listings_updated_seller_idx
-- One index for both the per-key lookups and the time-range reports.
CREATE INDEX CONCURRENTLY listings_updated_seller_idx ON listings (updated_at DESC, seller_id);
DROP INDEX CONCURRENTLY listings_seller_updated_idx;
