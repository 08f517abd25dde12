"""order-service configuration: the inventory call, the orders database and startup behaviour."""

import os

INVENTORY_SERVICE = "inventory-service"
INVENTORY_TIMEOUT_S = 3.0
"""Deadline for a reservation; a reservation is a single mongo-db round trip when healthy."""

MONGO_URI = os.environ.get(
    "ORDERS_MONGO_URI",
    "mongodb://mongo-db-0.mongo-db:27017,mongo-db-1.mongo-db:27017,"
    "mongo-db-2.mongo-db:27017/?replicaSet=rs0",
)
MONGO_DATABASE = "orders"
ORDERS_COLLECTION = "orders"

STARTUP_PRIMARY_WAIT_S = {{wait_s}}
"""At boot the service waits this long for a primary, then exits non-zero (and is restarted)."""

PRIMARY_HINT_FILE = os.environ.get("ORDERS_PRIMARY_HINT", "/var/run/orders/primary-hint")
"""Where the primary found at start is kept (an emptyDir; empty string: no hint)."""

SIDECAR_URL = os.environ.get("MESH_SIDECAR_URL", "http://127.0.0.1:15001")
"""The mesh sidecar that routes calls to other services."""

MAX_ITEMS_PER_ORDER = 50
