-- orders-db 0003_orders_add_promo_code
ALTER TABLE orders ADD COLUMN promo_code text;
