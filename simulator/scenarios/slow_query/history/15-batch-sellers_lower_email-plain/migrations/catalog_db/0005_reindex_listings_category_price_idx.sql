-- catalog-db 0005_reindex_listings_category_price_idx
-- listings_category_price_idx is bloated; rebuild it as it is, without a write lock.
REINDEX INDEX CONCURRENTLY listings_category_price_idx;
