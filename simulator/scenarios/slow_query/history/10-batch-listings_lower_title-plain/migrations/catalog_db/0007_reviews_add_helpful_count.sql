-- catalog-db 0007_reviews_add_helpful_count
ALTER TABLE reviews ADD COLUMN helpful_count integer NOT NULL DEFAULT 0;
