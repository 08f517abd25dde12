-- catalog-db 0008_add_reviews_reported_at_idx
CREATE INDEX CONCURRENTLY IF NOT EXISTS reviews_reported_at_idx ON reviews (reported_at);
