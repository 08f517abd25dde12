-- orders-db 0005_shipments_add_eta
ALTER TABLE shipments ADD COLUMN eta date;
