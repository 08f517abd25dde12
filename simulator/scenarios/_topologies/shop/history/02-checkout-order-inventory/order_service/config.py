"""order-service configuration: the inventory call and the orders database."""

import os

INVENTORY_SERVICE = "inventory-service"
INVENTORY_TIMEOUT_S = 3.0
"""Deadline for a reservation; a reservation is a single mongo-db round trip when healthy."""

MONGO_URI = os.environ.get("ORDERS_MONGO_URI", "mongodb://mongo-db:27017/?replicaSet=rs0")
MONGO_DATABASE = "orders"

MAX_ITEMS_PER_ORDER = 50
