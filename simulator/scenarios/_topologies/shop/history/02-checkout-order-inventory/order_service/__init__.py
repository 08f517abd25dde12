"""order-service: creates orders once inventory-service has reserved their stock."""

from order_service.handlers import InMemoryOrderStore, OrderApp

__all__ = ["InMemoryOrderStore", "OrderApp"]
