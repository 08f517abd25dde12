-- orders-db 0004_shipments_add_label_url
ALTER TABLE shipments ADD COLUMN label_url text;
