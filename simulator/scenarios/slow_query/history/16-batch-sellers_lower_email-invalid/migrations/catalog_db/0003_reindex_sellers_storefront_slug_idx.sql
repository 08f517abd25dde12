-- catalog-db 0003_reindex_sellers_storefront_slug_idx
-- sellers_storefront_slug_idx is bloated; rebuild it as it is, without a write lock.
REINDEX INDEX CONCURRENTLY sellers_storefront_slug_idx;
