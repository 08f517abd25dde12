-- orders-db 0007_shipments_add_eta
ALTER TABLE shipments ADD COLUMN eta date;
