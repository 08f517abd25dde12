-- catalog-db 0008_listings_updated_seller_idx
-- The listings reports range over updated_at DESC first; listings_seller_updated_idx stays for the lookups.
CREATE INDEX CONCURRENTLY IF NOT EXISTS listings_updated_seller_idx ON listings (updated_at DESC, seller_id);
