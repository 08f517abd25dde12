-- orders-db 0007_create_refund_requests
CREATE TABLE refund_requests (
    id bigint PRIMARY KEY,
    order_id bigint NOT NULL REFERENCES orders (id),
    reason text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX refund_requests_order_idx ON refund_requests (order_id);
