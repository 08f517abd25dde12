-- catalog-db 0004_simplify_listings_seller_updated_idx
-- listings_seller_updated_idx was built with fillfactor 70 for in-place updates that no longer happen;
-- the default packs its pages fuller.
ALTER INDEX listings_seller_updated_idx RESET (fillfactor);
REINDEX INDEX CONCURRENTLY listings_seller_updated_idx;
