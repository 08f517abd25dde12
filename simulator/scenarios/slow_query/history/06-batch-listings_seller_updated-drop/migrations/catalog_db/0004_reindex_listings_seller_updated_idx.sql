-- catalog-db 0004_reindex_listings_seller_updated_idx
-- listings_seller_updated_idx is bloated; rebuild it as it is, without a write lock.
REINDEX INDEX CONCURRENTLY listings_seller_updated_idx;
