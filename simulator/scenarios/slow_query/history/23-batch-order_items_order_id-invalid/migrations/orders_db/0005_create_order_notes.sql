-- orders-db 0005_create_order_notes
CREATE TABLE order_notes (
    order_id bigint NOT NULL REFERENCES orders (id),
    author text NOT NULL,
    body text NOT NULL
);
