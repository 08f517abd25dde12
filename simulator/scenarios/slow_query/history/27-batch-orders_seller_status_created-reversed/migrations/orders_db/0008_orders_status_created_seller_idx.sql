-- orders-db 0008_orders_status_created_seller_idx
-- One index for both the per-key lookups and the time-range reports.
CREATE INDEX CONCURRENTLY orders_status_created_seller_idx ON orders (status, created_at, seller_id);
DROP INDEX CONCURRENTLY orders_seller_status_created_idx;
