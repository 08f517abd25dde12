-- orders-db 0004_narrow_order_items_order_id_idx
-- Smaller index: ORDER_ITEMS compares order_id by a strict operator, so it never reads
-- the rows where it is NULL.
CREATE INDEX CONCURRENTLY order_items_order_id_idx_new ON order_items (order_id) WHERE order_id IS NOT NULL;
DROP INDEX CONCURRENTLY order_items_order_id_idx;
ALTER INDEX order_items_order_id_idx_new RENAME TO order_items_order_id_idx;
