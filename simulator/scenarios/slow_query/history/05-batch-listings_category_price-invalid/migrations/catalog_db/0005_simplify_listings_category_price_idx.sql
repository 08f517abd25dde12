-- catalog-db 0005_simplify_listings_category_price_idx
-- listings_category_price_idx was built with fillfactor 70 for in-place updates that no longer happen;
-- the default packs its pages fuller.
ALTER INDEX listings_category_price_idx RESET (fillfactor);
REINDEX INDEX CONCURRENTLY listings_category_price_idx;
