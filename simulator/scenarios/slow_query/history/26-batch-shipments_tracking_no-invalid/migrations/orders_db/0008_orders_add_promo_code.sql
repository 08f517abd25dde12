-- orders-db 0008_orders_add_promo_code
ALTER TABLE orders ADD COLUMN promo_code text;
