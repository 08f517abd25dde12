-- payment-service schema, database "payments" on postgres-db.
CREATE TABLE payments (
    id             text PRIMARY KEY,
    merchant_id    text NOT NULL,
    amount_cents   bigint NOT NULL CHECK (amount_cents > 0),
    currency       char(3) NOT NULL,
    status         text NOT NULL,
    provider_ref   text NOT NULL,
    refunded_cents bigint NOT NULL DEFAULT 0,
    created_at     timestamptz NOT NULL DEFAULT now()
);
