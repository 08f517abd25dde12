-- orders-db 0007_simplify_order_items_order_id_idx
-- archive.order_items is the pre-2024 order_items, moved to the archive schema with its indexes; only the
-- yearly export reads it, and nothing writes to it any more.
ALTER INDEX archive.order_items_order_id_idx SET (fillfactor = 100);
REINDEX INDEX CONCURRENTLY archive.order_items_order_id_idx;
