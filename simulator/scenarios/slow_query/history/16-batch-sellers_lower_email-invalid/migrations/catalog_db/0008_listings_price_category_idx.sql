-- catalog-db 0008_listings_price_category_idx
-- The listings reports range over price_cents first; listings_category_price_idx stays for the lookups.
CREATE INDEX CONCURRENTLY IF NOT EXISTS listings_price_category_idx ON listings (price_cents, category_id) WHERE status = 'active';
