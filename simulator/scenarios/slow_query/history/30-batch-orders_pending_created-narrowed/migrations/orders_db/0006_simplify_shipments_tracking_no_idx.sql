-- orders-db 0006_simplify_shipments_tracking_no_idx
-- shipments_tracking_no_idx was built with fillfactor 70 for in-place updates that no longer happen;
-- the default packs its pages fuller.
ALTER INDEX shipments_tracking_no_idx RESET (fillfactor);
REINDEX INDEX CONCURRENTLY shipments_tracking_no_idx;
