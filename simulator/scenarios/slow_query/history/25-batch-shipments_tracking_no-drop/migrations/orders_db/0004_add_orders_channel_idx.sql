-- orders-db 0004_add_orders_channel_idx
CREATE INDEX CONCURRENTLY IF NOT EXISTS orders_channel_idx ON orders (channel);
