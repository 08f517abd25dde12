-- catalog-db 0003_add_listings_view_count_idx
CREATE INDEX CONCURRENTLY IF NOT EXISTS listings_view_count_idx ON listings (view_count);
