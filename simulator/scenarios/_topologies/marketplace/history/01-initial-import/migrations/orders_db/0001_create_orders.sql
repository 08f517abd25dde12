-- orders-db 0001: orders and their items.
CREATE TABLE orders (
    id          bigint PRIMARY KEY,
    buyer_id    bigint NOT NULL,
    seller_id   bigint NOT NULL,
    status      text NOT NULL DEFAULT 'pending',
    total_cents integer NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX orders_buyer_created_idx ON orders (buyer_id, created_at DESC);
CREATE INDEX orders_seller_status_created_idx ON orders (seller_id, status, created_at);
CREATE INDEX orders_pending_created_idx ON orders (created_at) WHERE status = 'pending';

CREATE TABLE order_items (
    order_id    bigint NOT NULL REFERENCES orders (id),
    listing_id  bigint NOT NULL,
    qty         integer NOT NULL CHECK (qty > 0),
    price_cents integer NOT NULL
);
CREATE INDEX order_items_order_id_idx ON order_items (order_id);
