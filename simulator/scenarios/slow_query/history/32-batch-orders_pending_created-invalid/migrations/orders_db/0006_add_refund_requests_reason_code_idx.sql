-- orders-db 0006_add_refund_requests_reason_code_idx
CREATE INDEX CONCURRENTLY IF NOT EXISTS refund_requests_reason_code_idx ON refund_requests (reason_code);
