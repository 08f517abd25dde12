-- orders-db 0004_orders_add_channel
ALTER TABLE orders ADD COLUMN channel text;
