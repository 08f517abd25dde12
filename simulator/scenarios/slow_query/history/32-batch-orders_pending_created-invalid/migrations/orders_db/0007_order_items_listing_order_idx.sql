-- orders-db 0007_order_items_listing_order_idx
-- The order_items reports range over listing_id first; order_items_order_id_idx stays for the lookups.
CREATE INDEX CONCURRENTLY IF NOT EXISTS order_items_listing_order_idx ON order_items (listing_id, order_id);
