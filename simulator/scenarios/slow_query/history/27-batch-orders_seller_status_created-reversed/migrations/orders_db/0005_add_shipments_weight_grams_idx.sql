-- orders-db 0005_add_shipments_weight_grams_idx
CREATE INDEX CONCURRENTLY IF NOT EXISTS shipments_weight_grams_idx ON shipments (weight_grams);
