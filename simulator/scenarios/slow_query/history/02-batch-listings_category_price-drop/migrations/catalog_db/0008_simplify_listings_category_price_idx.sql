-- catalog-db 0008_simplify_listings_category_price_idx
-- archive.listings is the pre-2024 listings, moved to the archive schema with its indexes; only the
-- yearly export reads it, and nothing writes to it any more.
ALTER INDEX archive.listings_category_price_idx SET (fillfactor = 100);
REINDEX INDEX CONCURRENTLY archive.listings_category_price_idx;
