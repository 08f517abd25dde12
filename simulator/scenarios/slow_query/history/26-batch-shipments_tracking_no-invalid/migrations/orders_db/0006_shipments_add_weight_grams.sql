-- orders-db 0006_shipments_add_weight_grams
ALTER TABLE shipments ADD COLUMN weight_grams integer;
