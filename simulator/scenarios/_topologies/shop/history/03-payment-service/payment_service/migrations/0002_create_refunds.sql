CREATE TABLE refunds (
    id           text PRIMARY KEY,
    payment_id   text NOT NULL REFERENCES payments (id),
    amount_cents bigint NOT NULL CHECK (amount_cents > 0),
    created_at   timestamptz NOT NULL DEFAULT now()
);
