-- catalog-db 0003_drop_unused_listing_flags_resolved_at_idx
-- pg_stat_user_indexes shows idx_scan = 0 for listing_flags_resolved_at_idx on the primary too.
DROP INDEX CONCURRENTLY IF EXISTS listing_flags_resolved_at_idx;
