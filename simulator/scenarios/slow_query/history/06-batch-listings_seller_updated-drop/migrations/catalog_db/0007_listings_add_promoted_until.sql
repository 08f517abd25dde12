-- catalog-db 0007_listings_add_promoted_until
ALTER TABLE listings ADD COLUMN promoted_until timestamptz;
