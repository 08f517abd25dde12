-- orders-db 0008_add_order_items_discount_cents_idx
CREATE INDEX CONCURRENTLY IF NOT EXISTS order_items_discount_cents_idx ON order_items (discount_cents);
