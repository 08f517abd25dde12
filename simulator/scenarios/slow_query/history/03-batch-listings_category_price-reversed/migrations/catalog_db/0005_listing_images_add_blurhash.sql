-- catalog-db 0005_listing_images_add_blurhash
ALTER TABLE listing_images ADD COLUMN blurhash text;
