-- catalog-db 0008_create_saved_searches
CREATE TABLE saved_searches (
    id bigint PRIMARY KEY,
    buyer_id bigint NOT NULL,
    query text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX saved_searches_buyer_idx ON saved_searches (buyer_id);
