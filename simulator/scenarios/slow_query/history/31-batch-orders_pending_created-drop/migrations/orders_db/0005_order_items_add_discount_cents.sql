-- orders-db 0005_order_items_add_discount_cents
ALTER TABLE order_items ADD COLUMN discount_cents integer NOT NULL DEFAULT 0;
