-- catalog-db 0006_listings_add_language
ALTER TABLE listings ADD COLUMN language text;
