-- catalog-db 0008_listings_add_shipping_profile_id
ALTER TABLE listings ADD COLUMN shipping_profile_id bigint;
