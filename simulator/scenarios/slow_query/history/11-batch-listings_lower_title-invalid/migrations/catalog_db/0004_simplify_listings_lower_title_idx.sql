-- catalog-db 0004_simplify_listings_lower_title_idx
-- listings_lower_title_idx was built with fillfactor 70 for in-place updates that no longer happen;
-- the default packs its pages fuller.
ALTER INDEX listings_lower_title_idx RESET (fillfactor);
REINDEX INDEX CONCURRENTLY listings_lower_title_idx;
