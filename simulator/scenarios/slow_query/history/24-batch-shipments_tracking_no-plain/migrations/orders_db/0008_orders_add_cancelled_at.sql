-- orders-db 0008_orders_add_cancelled_at
ALTER TABLE orders ADD COLUMN cancelled_at timestamptz;
