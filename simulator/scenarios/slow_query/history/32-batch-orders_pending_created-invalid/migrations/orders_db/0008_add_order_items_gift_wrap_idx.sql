-- orders-db 0008_add_order_items_gift_wrap_idx
CREATE INDEX CONCURRENTLY IF NOT EXISTS order_items_gift_wrap_idx ON order_items (gift_wrap);
