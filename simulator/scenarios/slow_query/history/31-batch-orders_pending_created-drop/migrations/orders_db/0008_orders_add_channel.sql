-- orders-db 0008_orders_add_channel
ALTER TABLE orders ADD COLUMN channel text;
