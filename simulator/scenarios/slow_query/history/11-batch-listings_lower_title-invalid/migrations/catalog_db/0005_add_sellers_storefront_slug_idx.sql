-- catalog-db 0005_add_sellers_storefront_slug_idx
CREATE INDEX CONCURRENTLY IF NOT EXISTS sellers_storefront_slug_idx ON sellers (storefront_slug);
