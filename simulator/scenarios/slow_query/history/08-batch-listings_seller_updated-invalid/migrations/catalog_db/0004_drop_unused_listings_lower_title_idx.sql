-- catalog-db 0004_drop_unused_listings_lower_title_idx
-- archive.listings is the pre-2024 listings, moved to the archive schema with its indexes
-- (ALTER TABLE ... SET SCHEMA keeps their names); only the yearly export reads it,
-- and pg_stat_user_indexes shows idx_scan = 0 for archive.listings_lower_title_idx.
DROP INDEX CONCURRENTLY IF EXISTS archive.listings_lower_title_idx;
