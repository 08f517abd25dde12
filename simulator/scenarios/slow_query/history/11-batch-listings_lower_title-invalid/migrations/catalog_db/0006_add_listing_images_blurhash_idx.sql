-- catalog-db 0006_add_listing_images_blurhash_idx
CREATE INDEX CONCURRENTLY IF NOT EXISTS listing_images_blurhash_idx ON listing_images (blurhash);
