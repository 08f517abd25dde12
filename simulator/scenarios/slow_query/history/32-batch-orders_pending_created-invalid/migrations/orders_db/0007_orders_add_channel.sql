-- orders-db 0007_orders_add_channel
ALTER TABLE orders ADD COLUMN channel text;
