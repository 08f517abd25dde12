-- orders-db 0008_refund_requests_add_decided_at
ALTER TABLE refund_requests ADD COLUMN decided_at timestamptz;
