-- catalog-db 0006_reindex_listings_lower_title_idx
-- listings_lower_title_idx is 40% bloat; rebuild it without taking a write lock.
DROP INDEX CONCURRENTLY listings_lower_title_idx;
CREATE INDEX CONCURRENTLY listings_lower_title_idx ON listings (lower(title) text_pattern_ops) WHERE status = 'active';
