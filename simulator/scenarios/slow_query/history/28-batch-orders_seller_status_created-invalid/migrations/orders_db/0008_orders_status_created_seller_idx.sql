-- orders-db 0008_orders_status_created_seller_idx
-- The orders reports range over status first; orders_seller_status_created_idx stays for the lookups.
CREATE INDEX CONCURRENTLY IF NOT EXISTS orders_status_created_seller_idx ON orders (status, created_at, seller_id);
