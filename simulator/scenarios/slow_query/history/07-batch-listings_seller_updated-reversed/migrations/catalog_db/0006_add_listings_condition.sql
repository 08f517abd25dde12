-- catalog-db 0006_add_listings_condition
ALTER TABLE listings ADD COLUMN condition text;
