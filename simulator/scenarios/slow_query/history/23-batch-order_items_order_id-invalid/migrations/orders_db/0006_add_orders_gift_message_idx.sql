-- orders-db 0006_add_orders_gift_message_idx
CREATE INDEX CONCURRENTLY IF NOT EXISTS orders_gift_message_idx ON orders (gift_message);
