"""order-service HTTP handlers: create an order (after reserving its stock) and read it back."""

from __future__ import annotations

import logging
from typing import Protocol

from order_service import config
from shop_common import (
    Request,
    Response,
    ServiceApp,
    Transport,
    UpstreamError,
    error_response,
    json_response,
)

log = logging.getLogger("order-service")


class OrderStore(Protocol):
    """Orders by id (the ``orders.orders`` collection in production)."""

    def next_id(self) -> str: ...

    def save(self, order: dict) -> None: ...

    def get(self, order_id: str) -> dict | None: ...


class InMemoryOrderStore:
    """An OrderStore in a dict, with sequential ids: local dev and tests."""

    def __init__(self) -> None:
        self._orders: dict[str, dict] = {}
        self._sequence = 0

    def next_id(self) -> str:
        self._sequence += 1
        return f"ord-{self._sequence:06d}"

    def save(self, order: dict) -> None:
        self._orders[order["order_id"]] = dict(order)

    def get(self, order_id: str) -> dict | None:
        order = self._orders.get(order_id)
        return dict(order) if order is not None else None


class OrderApp(ServiceApp):
    """The order-service app."""

    service = "order-service"

    def __init__(self, store: OrderStore, transport: Transport) -> None:
        super().__init__()
        self._store = store
        self._transport = transport
        self.router.add("POST", "/v1/orders", self.create)
        self.router.add("GET", "/v1/orders/{order_id}", self.get_order)

    def create(self, request: Request) -> Response:
        user_id = request.body.get("user_id")
        items = request.body.get("items") or []
        if not user_id or not items or len(items) > config.MAX_ITEMS_PER_ORDER:
            return error_response(422, "invalid_order",
                                  f"need a user_id and 1-{config.MAX_ITEMS_PER_ORDER} items")
        order_id = self._store.next_id()
        reserve = Request("POST", "/v1/inventory/reservations",
                          body={"order_id": order_id, "items": items})
        try:
            answer = self._transport.send(config.INVENTORY_SERVICE, reserve,
                                          timeout_s=config.INVENTORY_TIMEOUT_S)
        except UpstreamError as exc:
            log.error("reservation for %s failed: %s", order_id, exc)
            return error_response(503, "inventory_unavailable", "could not reserve stock")
        if answer.status == 409:
            return Response(409, answer.body)
        if not answer.ok:
            log.error("inventory-service answered %d for %s", answer.status, order_id)
            return error_response(503, "inventory_unavailable", "could not reserve stock")
        order = {"order_id": order_id, "user_id": user_id, "items": items, "status": "confirmed"}
        self._store.save(order)
        log.info("order %s confirmed (%d lines)", order_id, len(items))
        return json_response(201, **order)

    def get_order(self, request: Request) -> Response:
        order = self._store.get(request.params["order_id"])
        if order is None:
            return error_response(404, "not_found", f"no order {request.params['order_id']}")
        return json_response(200, **order)
