-- catalog-db 0004_drop_unused_listings_shipping_profile_id_idx
-- pg_stat_user_indexes shows idx_scan = 0 for listings_shipping_profile_id_idx on the primary too.
DROP INDEX CONCURRENTLY IF EXISTS listings_shipping_profile_id_idx;
