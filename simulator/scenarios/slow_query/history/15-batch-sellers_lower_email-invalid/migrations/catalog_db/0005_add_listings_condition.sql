-- catalog-db 0005_add_listings_condition
ALTER TABLE listings ADD COLUMN condition text;
