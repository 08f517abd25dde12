-- orders-db 0003_orders_created_buyer_idx
-- One index for both the per-key lookups and the time-range reports.
CREATE INDEX CONCURRENTLY orders_created_buyer_idx ON orders (created_at DESC, buyer_id);
DROP INDEX CONCURRENTLY orders_buyer_created_idx;
