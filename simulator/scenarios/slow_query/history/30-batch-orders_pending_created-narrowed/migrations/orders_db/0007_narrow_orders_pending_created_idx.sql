-- orders-db 0007_narrow_orders_pending_created_idx
-- Smaller index: leave out rows the hot paths never read.
DROP INDEX CONCURRENTLY orders_pending_created_idx;
CREATE INDEX CONCURRENTLY orders_pending_created_idx ON orders (created_at) WHERE status = 'awaiting_payment';
