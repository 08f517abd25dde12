-- catalog-db 0003_drop_unused_categories_icon_idx
-- pg_stat_user_indexes shows idx_scan = 0 for categories_icon_idx on the primary too.
DROP INDEX CONCURRENTLY IF EXISTS categories_icon_idx;
