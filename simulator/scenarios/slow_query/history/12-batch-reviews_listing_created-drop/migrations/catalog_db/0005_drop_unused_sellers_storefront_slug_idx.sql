-- catalog-db 0005_drop_unused_sellers_storefront_slug_idx
-- pg_stat_user_indexes shows idx_scan = 0 for sellers_storefront_slug_idx on the primary too.
DROP INDEX CONCURRENTLY IF EXISTS sellers_storefront_slug_idx;
