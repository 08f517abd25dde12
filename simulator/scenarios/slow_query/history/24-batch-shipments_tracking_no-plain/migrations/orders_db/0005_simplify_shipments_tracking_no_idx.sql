-- orders-db 0005_simplify_shipments_tracking_no_idx
-- carriers send tracking numbers in mixed case; index them upper-cased.
CREATE UNIQUE INDEX CONCURRENTLY shipments_upper_tracking_no_idx ON shipments (upper(tracking_no));
DROP INDEX CONCURRENTLY shipments_tracking_no_idx;
