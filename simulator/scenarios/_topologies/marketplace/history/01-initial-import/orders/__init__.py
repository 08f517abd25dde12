"""orders: checkout, order history and shipment tracking on orders-db."""
