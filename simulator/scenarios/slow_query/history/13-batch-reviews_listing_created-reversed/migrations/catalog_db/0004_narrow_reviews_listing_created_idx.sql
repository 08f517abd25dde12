-- catalog-db 0004_narrow_reviews_listing_created_idx
-- archive.reviews is the pre-2024 reviews, moved to the archive schema with its indexes; only the
-- yearly export reads it, and nothing writes to it any more.
-- Smaller index: LATEST_FOR_LISTING compares listing_id by a strict operator, so it never reads
-- the rows where it is NULL.
CREATE INDEX CONCURRENTLY reviews_listing_created_idx_new ON archive.reviews (listing_id, created_at DESC) WHERE listing_id IS NOT NULL;
DROP INDEX CONCURRENTLY archive.reviews_listing_created_idx;
ALTER INDEX archive.reviews_listing_created_idx_new RENAME TO reviews_listing_created_idx;
