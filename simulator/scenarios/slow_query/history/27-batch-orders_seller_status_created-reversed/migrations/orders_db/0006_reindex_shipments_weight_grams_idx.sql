-- orders-db 0006_reindex_shipments_weight_grams_idx
-- shipments_weight_grams_idx is bloated; rebuild it as it is, without a write lock.
REINDEX INDEX CONCURRENTLY shipments_weight_grams_idx;
