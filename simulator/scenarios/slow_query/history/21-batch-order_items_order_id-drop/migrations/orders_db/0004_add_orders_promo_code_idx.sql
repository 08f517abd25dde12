-- orders-db 0004_add_orders_promo_code_idx
CREATE INDEX CONCURRENTLY IF NOT EXISTS orders_promo_code_idx ON orders (promo_code);
