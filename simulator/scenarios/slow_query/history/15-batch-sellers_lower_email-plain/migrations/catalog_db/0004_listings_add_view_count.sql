-- catalog-db 0004_listings_add_view_count
ALTER TABLE listings ADD COLUMN view_count integer NOT NULL DEFAULT 0;
