-- orders-db 0008_order_items_listing_order_idx
-- One index for both the per-key lookups and the time-range reports.
CREATE INDEX CONCURRENTLY order_items_listing_order_idx ON order_items (listing_id, order_id);
DROP INDEX CONCURRENTLY order_items_order_id_idx;
