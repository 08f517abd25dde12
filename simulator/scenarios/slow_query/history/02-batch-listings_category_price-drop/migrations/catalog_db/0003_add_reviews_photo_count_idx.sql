-- catalog-db 0003_add_reviews_photo_count_idx
CREATE INDEX CONCURRENTLY IF NOT EXISTS reviews_photo_count_idx ON reviews (photo_count);
