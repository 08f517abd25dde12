-- catalog-db 0001: sellers, listings and their images.
CREATE TABLE sellers (
    id           bigint PRIMARY KEY,
    email        text NOT NULL,
    display_name text NOT NULL,
    country      char(2) NOT NULL
);
CREATE UNIQUE INDEX sellers_lower_email_idx ON sellers (lower(email));

CREATE TABLE listings (
    id          bigint PRIMARY KEY,
    seller_id   bigint NOT NULL REFERENCES sellers (id),
    category_id integer NOT NULL,
    title       text NOT NULL,
    status      text NOT NULL DEFAULT 'draft',
    price_cents integer NOT NULL CHECK (price_cents > 0),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX listings_category_price_idx ON listings (category_id, price_cents) WHERE status = 'active';
CREATE INDEX listings_seller_updated_idx ON listings (seller_id, updated_at DESC);
CREATE INDEX listings_lower_title_idx ON listings (lower(title) text_pattern_ops) WHERE status = 'active';

CREATE TABLE listing_images (
    listing_id bigint NOT NULL REFERENCES listings (id) ON DELETE CASCADE,
    position   smallint NOT NULL,
    url        text NOT NULL,
    PRIMARY KEY (listing_id, position)
);
