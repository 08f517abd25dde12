-- catalog-db 0004_add_listings_condition
ALTER TABLE listings ADD COLUMN condition text;
