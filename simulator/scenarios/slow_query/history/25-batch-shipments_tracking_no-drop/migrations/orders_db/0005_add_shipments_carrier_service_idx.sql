-- orders-db 0005_add_shipments_carrier_service_idx
CREATE INDEX CONCURRENTLY IF NOT EXISTS shipments_carrier_service_idx ON shipments (carrier_service);
