-- catalog-db 0007_simplify_reviews_listing_created_idx
-- archive.reviews is the pre-2024 reviews, moved to the archive schema with its indexes; only the
-- yearly export reads it, and nothing writes to it any more.
ALTER INDEX archive.reviews_listing_created_idx SET (fillfactor = 100);
REINDEX INDEX CONCURRENTLY archive.reviews_listing_created_idx;
