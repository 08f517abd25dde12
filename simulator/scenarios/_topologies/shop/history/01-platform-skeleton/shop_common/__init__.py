"""Shared plumbing of the shop services: HTTP values, routing and service-to-service calls."""

from shop_common.http import Request, Response, Router, ServiceApp, error_response, json_response
from shop_common.transport import (
    InProcessTransport,
    Transport,
    UpstreamError,
    UpstreamTimeout,
    UpstreamUnavailable,
)

__all__ = [
    "InProcessTransport",
    "Request",
    "Response",
    "Router",
    "ServiceApp",
    "Transport",
    "UpstreamError",
    "UpstreamTimeout",
    "UpstreamUnavailable",
    "error_response",
    "json_response",
]
