-- catalog-db 0004_add_listings_promoted_until_idx
CREATE INDEX CONCURRENTLY IF NOT EXISTS listings_promoted_until_idx ON listings (promoted_until);
