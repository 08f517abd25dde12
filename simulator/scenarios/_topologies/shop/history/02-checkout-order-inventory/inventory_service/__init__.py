"""inventory-service: stock levels per SKU on mongo-db, and all-or-nothing reservations."""

from inventory_service.handlers import InventoryApp
from inventory_service.store import InMemoryCollection, StockStore

__all__ = ["InMemoryCollection", "InventoryApp", "StockStore"]
