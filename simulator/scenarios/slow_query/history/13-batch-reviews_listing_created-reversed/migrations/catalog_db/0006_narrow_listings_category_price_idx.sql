-- catalog-db 0006_narrow_listings_category_price_idx
-- Smaller index: BROWSE_CATEGORY compares category_id by a strict operator, so it never reads
-- the rows where it is NULL.
CREATE INDEX CONCURRENTLY listings_category_price_idx_new ON listings (category_id, price_cents) WHERE status = 'active' AND category_id IS NOT NULL;
DROP INDEX CONCURRENTLY listings_category_price_idx;
ALTER INDEX listings_category_price_idx_new RENAME TO listings_category_price_idx;
