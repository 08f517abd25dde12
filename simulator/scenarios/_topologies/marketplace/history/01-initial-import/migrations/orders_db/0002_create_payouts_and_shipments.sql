-- orders-db 0002: seller payouts and shipment tracking.
CREATE TABLE payouts (
    id           bigint PRIMARY KEY,
    seller_id    bigint NOT NULL,
    period_end   date NOT NULL,
    amount_cents integer NOT NULL,
    status       text NOT NULL DEFAULT 'scheduled'
);
CREATE UNIQUE INDEX payouts_seller_period_idx ON payouts (seller_id, period_end);

CREATE TABLE shipments (
    order_id    bigint PRIMARY KEY REFERENCES orders (id),
    tracking_no text NOT NULL,
    carrier     text NOT NULL,
    status      text NOT NULL DEFAULT 'label_created',
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX shipments_tracking_no_idx ON shipments (tracking_no);
