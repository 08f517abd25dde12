-- catalog-db 0003_reviews_add_photo_count
ALTER TABLE reviews ADD COLUMN photo_count integer NOT NULL DEFAULT 0;
