-- orders-db 0008_add_shipments_label_url_idx
CREATE INDEX CONCURRENTLY IF NOT EXISTS shipments_label_url_idx ON shipments (label_url);
