-- catalog-db 0006_simplify_reviews_listing_created_idx
-- reviews_listing_created_idx was built with fillfactor 70 for in-place updates that no longer happen;
-- the default packs its pages fuller.
ALTER INDEX reviews_listing_created_idx RESET (fillfactor);
REINDEX INDEX CONCURRENTLY reviews_listing_created_idx;
