-- catalog-db 0006_create_listing_flags
CREATE TABLE listing_flags (
    listing_id bigint NOT NULL REFERENCES listings (id),
    reason text NOT NULL,
    flagged_at timestamptz NOT NULL DEFAULT now()
);
