-- catalog-db 0007_drop_unused_sellers_lower_email_idx
-- archive.sellers is the pre-2024 sellers, moved to the archive schema with its indexes
-- (ALTER TABLE ... SET SCHEMA keeps their names); only the yearly export reads it,
-- and pg_stat_user_indexes shows idx_scan = 0 for archive.sellers_lower_email_idx.
DROP INDEX CONCURRENTLY IF EXISTS archive.sellers_lower_email_idx;
