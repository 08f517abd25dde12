-- catalog-db 0006_reviews_add_reported_at
ALTER TABLE reviews ADD COLUMN reported_at timestamptz;
