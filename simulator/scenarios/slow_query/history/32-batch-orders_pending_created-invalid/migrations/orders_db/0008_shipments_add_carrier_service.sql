-- orders-db 0008_shipments_add_carrier_service
ALTER TABLE shipments ADD COLUMN carrier_service text;
