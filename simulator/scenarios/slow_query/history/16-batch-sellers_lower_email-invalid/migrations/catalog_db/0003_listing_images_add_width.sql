-- catalog-db 0003_listing_images_add_width
ALTER TABLE listing_images ADD COLUMN width integer;
