"""inventory-service configuration: the MongoDB replica set and startup behaviour."""

import os

MONGO_URI = os.environ.get(
    "INVENTORY_MONGO_URI",
    "mongodb://mongo-db-0.mongo-db:27017,mongo-db-1.mongo-db:27017,"
    "mongo-db-2.mongo-db:27017/?replicaSet=rs0",
)
MONGO_DATABASE = "inventory"
STOCK_COLLECTION = "stock"

SERVER_SELECTION_TIMEOUT_MS = 5_000
"""How long a query waits for a reachable primary before it fails."""

STARTUP_PRIMARY_WAIT_S = {{wait_s}}
"""At boot the service waits this long for a primary, then exits non-zero (and is restarted)."""

PRIMARY_HINT_FILE = os.environ.get("INVENTORY_PRIMARY_HINT", "/var/run/inventory/primary-hint")
"""Where the primary found at start is kept (an emptyDir; empty string: no hint)."""

MAX_ITEMS_PER_RESERVATION = 50
