-- catalog-db 0006_add_reviews_reply_text_idx
CREATE INDEX CONCURRENTLY IF NOT EXISTS reviews_reply_text_idx ON reviews (reply_text);
