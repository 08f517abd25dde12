-- orders-db 0007_refund_requests_add_reason_code
ALTER TABLE refund_requests ADD COLUMN reason_code text;
