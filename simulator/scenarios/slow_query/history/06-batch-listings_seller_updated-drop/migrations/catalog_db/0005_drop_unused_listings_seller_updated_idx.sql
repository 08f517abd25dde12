-- catalog-db 0005_drop_unused_listings_seller_updated_idx
-- pg_stat_user_indexes shows idx_scan = 0 for listings_seller_updated_idx: dead weight on every write.
DROP INDEX CONCURRENTLY IF EXISTS listings_seller_updated_idx;
