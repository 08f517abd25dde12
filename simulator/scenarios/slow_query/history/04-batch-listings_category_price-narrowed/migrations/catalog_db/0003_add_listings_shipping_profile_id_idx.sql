-- catalog-db 0003_add_listings_shipping_profile_id_idx
CREATE INDEX CONCURRENTLY IF NOT EXISTS listings_shipping_profile_id_idx ON listings (shipping_profile_id);
