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

STARTUP_PRIMARY_WAIT_S = 30
"""At boot the service waits this long for a primary, then exits non-zero (and is restarted)."""

MAX_ITEMS_PER_RESERVATION = 50
