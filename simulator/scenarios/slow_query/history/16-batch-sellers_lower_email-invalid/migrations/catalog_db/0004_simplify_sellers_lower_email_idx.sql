-- catalog-db 0004_simplify_sellers_lower_email_idx
-- sellers_lower_email_idx was built with fillfactor 70 for in-place updates that no longer happen;
-- the default packs its pages fuller.
ALTER INDEX sellers_lower_email_idx RESET (fillfactor);
REINDEX INDEX CONCURRENTLY sellers_lower_email_idx;
