-- orders-db 0003_orders_add_cancelled_at
ALTER TABLE orders ADD COLUMN cancelled_at timestamptz;
