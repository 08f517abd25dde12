-- catalog-db 0007_reindex_listing_images_width_idx
-- listing_images_width_idx is bloated; rebuild it as it is, without a write lock.
REINDEX INDEX CONCURRENTLY listing_images_width_idx;
