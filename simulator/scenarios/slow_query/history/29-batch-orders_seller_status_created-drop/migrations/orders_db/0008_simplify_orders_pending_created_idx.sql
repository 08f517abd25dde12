-- orders-db 0008_simplify_orders_pending_created_idx
-- orders_pending_created_idx was built with fillfactor 70 for in-place updates that no longer happen;
-- the default packs its pages fuller.
ALTER INDEX orders_pending_created_idx RESET (fillfactor);
REINDEX INDEX CONCURRENTLY orders_pending_created_idx;
