-- catalog-db 0008_drop_unused_listing_images_blurhash_idx
-- pg_stat_user_indexes shows idx_scan = 0 for listing_images_blurhash_idx on the primary too.
DROP INDEX CONCURRENTLY IF EXISTS listing_images_blurhash_idx;
