-- orders-db 0004_add_refund_requests_decided_at_idx
CREATE INDEX CONCURRENTLY IF NOT EXISTS refund_requests_decided_at_idx ON refund_requests (decided_at);
