-- orders-db 0005_order_items_add_gift_wrap
ALTER TABLE order_items ADD COLUMN gift_wrap boolean NOT NULL DEFAULT false;
