-- orders-db 0005_narrow_order_items_order_id_idx
-- archive.order_items is the pre-2024 order_items, moved to the archive schema with its indexes; only the
-- yearly export reads it, and nothing writes to it any more.
-- Smaller index: ORDER_ITEMS compares order_id by a strict operator, so it never reads
-- the rows where it is NULL.
CREATE INDEX CONCURRENTLY order_items_order_id_idx_new ON archive.order_items (order_id) WHERE order_id IS NOT NULL;
DROP INDEX CONCURRENTLY archive.order_items_order_id_idx;
ALTER INDEX archive.order_items_order_id_idx_new RENAME TO order_items_order_id_idx;
