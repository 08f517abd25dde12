-- orders-db 0004_simplify_refund_requests_order_idx
-- One index serves the support tool's lookups; the composite was never read.
CREATE INDEX CONCURRENTLY refund_requests_order_only_idx ON refund_requests (order_id);
DROP INDEX CONCURRENTLY refund_requests_order_idx;
