-- orders-db 0006_shipments_add_eta
ALTER TABLE shipments ADD COLUMN eta date;
