-- catalog-db 0003_add_listings_condition
ALTER TABLE listings ADD COLUMN condition text;
