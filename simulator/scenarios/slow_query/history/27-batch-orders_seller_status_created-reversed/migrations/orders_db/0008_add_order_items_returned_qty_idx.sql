-- orders-db 0008_add_order_items_returned_qty_idx
CREATE INDEX CONCURRENTLY IF NOT EXISTS order_items_returned_qty_idx ON order_items (returned_qty);
