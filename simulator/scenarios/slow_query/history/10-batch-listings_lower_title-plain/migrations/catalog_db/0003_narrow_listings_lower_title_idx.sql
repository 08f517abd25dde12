-- catalog-db 0003_narrow_listings_lower_title_idx
-- Smaller index: TITLE_PREFIX compares lower(title) by a strict operator, so it never reads
-- the rows where it is NULL.
CREATE INDEX CONCURRENTLY listings_lower_title_idx_new ON listings (lower(title) text_pattern_ops) WHERE status = 'active' AND lower(title) IS NOT NULL;
DROP INDEX CONCURRENTLY listings_lower_title_idx;
ALTER INDEX listings_lower_title_idx_new RENAME TO listings_lower_title_idx;
