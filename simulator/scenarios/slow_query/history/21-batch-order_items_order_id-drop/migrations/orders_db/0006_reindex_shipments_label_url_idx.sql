-- orders-db 0006_reindex_shipments_label_url_idx
-- shipments_label_url_idx is bloated; rebuild it as it is, without a write lock.
REINDEX INDEX CONCURRENTLY shipments_label_url_idx;
