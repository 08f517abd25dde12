-- catalog-db 0002: buyer reviews.
CREATE TABLE reviews (
    id         bigint PRIMARY KEY,
    listing_id bigint NOT NULL REFERENCES listings (id),
    author_id  bigint NOT NULL,
    rating     smallint NOT NULL CHECK (rating BETWEEN 1 AND 5),
    body       text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX reviews_listing_created_idx ON reviews (listing_id, created_at DESC);
CREATE INDEX reviews_author_created_idx ON reviews (author_id, created_at DESC);
