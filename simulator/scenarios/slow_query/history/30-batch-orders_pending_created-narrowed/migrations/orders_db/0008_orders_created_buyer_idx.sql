-- orders-db 0008_orders_created_buyer_idx
-- The orders reports range over created_at DESC first; orders_buyer_created_idx stays for the lookups.
CREATE INDEX CONCURRENTLY IF NOT EXISTS orders_created_buyer_idx ON orders (created_at DESC, buyer_id);
