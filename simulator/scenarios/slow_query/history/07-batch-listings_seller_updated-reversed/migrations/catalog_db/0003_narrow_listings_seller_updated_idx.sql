-- catalog-db 0003_narrow_listings_seller_updated_idx
-- Smaller index: SELLER_DASHBOARD compares seller_id by a strict operator, so it never reads
-- the rows where it is NULL.
CREATE INDEX CONCURRENTLY listings_seller_updated_idx_new ON listings (seller_id, updated_at DESC) WHERE seller_id IS NOT NULL;
DROP INDEX CONCURRENTLY listings_seller_updated_idx;
ALTER INDEX listings_seller_updated_idx_new RENAME TO listings_seller_updated_idx;
