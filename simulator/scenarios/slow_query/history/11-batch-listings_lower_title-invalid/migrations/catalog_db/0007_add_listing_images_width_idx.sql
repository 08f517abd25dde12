-- catalog-db 0007_add_listing_images_width_idx
CREATE INDEX CONCURRENTLY IF NOT EXISTS listing_images_width_idx ON listing_images (width);
