"""checkout-service HTTP handlers: place an order for the signed-in user's cart.

The order is the source of truth: if order-service confirms it, checkout succeeds even when
the confirmation e-mail cannot be queued.
"""

from __future__ import annotations

import logging

from checkout_service import config
from shop_common import (
    Request,
    Response,
    ServiceApp,
    Transport,
    UpstreamError,
    error_response,
    json_response,
)

log = logging.getLogger("checkout-service")


class CheckoutApp(ServiceApp):
    """The checkout-service app."""

    service = "checkout-service"

    def __init__(self, transport: Transport) -> None:
        super().__init__()
        self._transport = transport
        self.router.add("POST", "/v1/checkout", self.checkout)

    def checkout(self, request: Request) -> Response:
        user_id = request.header("X-User-Id")
        if not user_id:
            return error_response(401, "unauthenticated", "checkout needs a signed-in user")
        items = request.body.get("items") or []
        if not items:
            return error_response(422, "empty_cart", "nothing to check out")
        answer = self._create_order(user_id, items)
        if answer is None:
            return error_response(503, "order_unavailable", "could not place the order, try again")
        if not answer.ok:
            return answer
        order = answer.body
        email = request.body.get("email")
        if email:
            self._notify(email, order)
        return json_response(201, order_id=order["order_id"], status=order["status"])

    def _create_order(self, user_id: str, items: list) -> Response | None:
        """POST the order, retrying timeouts, unreachable upstreams and 5xx; None if all fail."""
        create = Request("POST", "/v1/orders", body={"user_id": user_id, "items": items})
        for attempt in range(1 + config.ORDER_RETRIES):
            try:
                answer = self._transport.send(config.ORDER_SERVICE, create,
                                              timeout_s=config.ORDER_TIMEOUT_S)
            except UpstreamError as exc:
                log.warning("order-service attempt %d failed: %s", attempt + 1, exc)
                continue
            if answer.status < 500:
                return answer
            log.warning("order-service attempt %d answered %d", attempt + 1, answer.status)
        return None

    def _notify(self, email: str, order: dict) -> None:
        message = Request("POST", "/v1/notifications", body={
            "template": "order_confirmation", "to": email,
            "params": {"order_id": order["order_id"], "item_count": len(order["items"])}})
        try:
            answer = self._transport.send(config.NOTIFICATION_SERVICE, message,
                                          timeout_s=config.NOTIFY_TIMEOUT_S)
        except UpstreamError as exc:
            log.warning("confirmation for %s not queued: %s", order["order_id"], exc)
            return
        if not answer.ok:
            log.warning("confirmation for %s refused: %d", order["order_id"], answer.status)
