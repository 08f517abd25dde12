"""checkout-service: turns a cart into an order and sends the confirmation e-mail."""

from checkout_service.handlers import CheckoutApp

__all__ = ["CheckoutApp"]
