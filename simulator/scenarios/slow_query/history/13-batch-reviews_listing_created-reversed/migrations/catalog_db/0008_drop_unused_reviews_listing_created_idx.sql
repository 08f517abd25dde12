-- catalog-db 0008_drop_unused_reviews_listing_created_idx
-- archive.reviews is the pre-2024 reviews, moved to the archive schema with its indexes
-- (ALTER TABLE ... SET SCHEMA keeps their names); only the yearly export reads it,
-- and pg_stat_user_indexes shows idx_scan = 0 for archive.reviews_listing_created_idx.
DROP INDEX CONCURRENTLY IF EXISTS archive.reviews_listing_created_idx;
