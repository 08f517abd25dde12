-- catalog-db 0006_reviews_add_reply_text
ALTER TABLE reviews ADD COLUMN reply_text text;
