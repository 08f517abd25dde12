-- orders-db 0003_orders_add_currency
ALTER TABLE orders ADD COLUMN currency char(3) NOT NULL DEFAULT 'EUR';
