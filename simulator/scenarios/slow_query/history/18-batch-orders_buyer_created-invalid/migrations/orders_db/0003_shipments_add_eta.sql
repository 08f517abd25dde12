-- orders-db 0003_shipments_add_eta
ALTER TABLE shipments ADD COLUMN eta date;
