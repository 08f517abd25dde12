"""inventory-service HTTP handlers: stock lookups and reservations for orders."""

from __future__ import annotations

import logging

from inventory_service import config
from inventory_service.store import StockStore
from shop_common import Request, Response, ServiceApp, error_response, json_response

log = logging.getLogger("inventory-service")


class InventoryApp(ServiceApp):
    """The inventory-service app."""

    service = "inventory-service"

    def __init__(self, store: StockStore) -> None:
        super().__init__()
        self._store = store
        self.router.add("GET", "/v1/inventory/{sku}", self.get_stock)
        self.router.add("POST", "/v1/inventory/reservations", self.reserve)

    def get_stock(self, request: Request) -> Response:
        sku = request.params["sku"]
        available = self._store.available(sku)
        if available is None:
            return error_response(404, "unknown_sku", f"no SKU {sku}")
        return json_response(200, sku=sku, available=available)

    def reserve(self, request: Request) -> Response:
        """Reserve every line of an order, or none of them."""
        order_id = request.body.get("order_id")
        items = request.body.get("items") or []
        if not order_id or not items or len(items) > config.MAX_ITEMS_PER_RESERVATION:
            return error_response(422, "invalid_reservation",
                                  f"need an order_id and 1-{config.MAX_ITEMS_PER_RESERVATION} items")
        taken: list[tuple[str, int]] = []
        for item in items:
            sku, qty = str(item.get("sku", "")), int(item.get("qty", 0))
            if qty < 1 or not self._store.reserve(sku, qty):
                for done_sku, done_qty in taken:
                    self._store.release(done_sku, done_qty)
                log.info("reservation for %s refused: %s x%d not available", order_id, sku, qty)
                return error_response(409, "out_of_stock", f"{sku} x{qty} is not available")
            taken.append((sku, qty))
        return json_response(201, order_id=order_id, reserved=[{"sku": s, "qty": q} for s, q in taken])
