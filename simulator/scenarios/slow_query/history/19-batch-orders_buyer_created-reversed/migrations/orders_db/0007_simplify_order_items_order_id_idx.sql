-- orders-db 0007_simplify_order_items_order_id_idx
-- order_items_order_id_idx was built with fillfactor 70 for in-place updates that no longer happen;
-- the default packs its pages fuller.
ALTER INDEX order_items_order_id_idx RESET (fillfactor);
REINDEX INDEX CONCURRENTLY order_items_order_id_idx;
