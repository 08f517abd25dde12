-- catalog-db 0008_add_listings_language_idx
CREATE INDEX CONCURRENTLY IF NOT EXISTS listings_language_idx ON listings (language);
