-- catalog-db 0005_listing_images_add_alt_text
ALTER TABLE listing_images ADD COLUMN alt_text text;
