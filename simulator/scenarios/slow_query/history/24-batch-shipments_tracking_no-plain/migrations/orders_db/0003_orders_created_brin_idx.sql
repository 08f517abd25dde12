-- orders-db 0003_orders_created_brin_idx
CREATE INDEX CONCURRENTLY orders_created_brin_idx ON orders USING brin (created_at);
