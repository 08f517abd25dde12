-- catalog-db 0008_reindex_listings_category_price_idx
-- archive.listings is the pre-2024 listings, moved to the archive schema with its indexes; only the
-- yearly export reads it, and nothing writes to it any more.
-- archive.listings_category_price_idx is bloated; rebuild it as it is, without a write lock.
REINDEX INDEX CONCURRENTLY archive.listings_category_price_idx;
