-- orders-db 0007_orders_add_gift_message
ALTER TABLE orders ADD COLUMN gift_message text;
