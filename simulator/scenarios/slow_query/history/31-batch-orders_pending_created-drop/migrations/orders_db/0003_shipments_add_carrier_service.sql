-- orders-db 0003_shipments_add_carrier_service
ALTER TABLE shipments ADD COLUMN carrier_service text;
