-- orders-db 0004_shipments_add_eta
ALTER TABLE shipments ADD COLUMN eta date;
