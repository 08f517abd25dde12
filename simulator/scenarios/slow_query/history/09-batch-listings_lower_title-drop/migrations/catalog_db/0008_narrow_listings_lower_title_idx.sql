-- catalog-db 0008_narrow_listings_lower_title_idx
-- archive.listings is the pre-2024 listings, moved to the archive schema with its indexes; only the
-- yearly export reads it, and nothing writes to it any more.
-- Smaller index: TITLE_PREFIX compares lower(title) by a strict operator, so it never reads
-- the rows where it is NULL.
CREATE INDEX CONCURRENTLY listings_lower_title_idx_new ON archive.listings (lower(title) text_pattern_ops) WHERE status = 'active' AND lower(title) IS NOT NULL;
DROP INDEX CONCURRENTLY archive.listings_lower_title_idx;
ALTER INDEX archive.listings_lower_title_idx_new RENAME TO listings_lower_title_idx;
