-- orders-db 0005_add_orders_cancelled_at_idx
CREATE INDEX CONCURRENTLY IF NOT EXISTS orders_cancelled_at_idx ON orders (cancelled_at);
