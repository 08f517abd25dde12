-- catalog-db 0007_listings_add_language
ALTER TABLE listings ADD COLUMN language text;
