-- orders-db 0005_order_items_add_returned_qty
ALTER TABLE order_items ADD COLUMN returned_qty integer NOT NULL DEFAULT 0;
