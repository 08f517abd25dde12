"""Framework-free HTTP values shared by the shop services: requests, responses, routing.

Every service exposes an app object with ``handle(request) -> Response``. The server adapter
(``shop_common.server``) turns real HTTP into these values; tests call ``handle`` directly.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Callable

log = logging.getLogger("shop_common.http")


@dataclass(frozen=True)
class Request:
    """One inbound call, its JSON body already decoded."""

    method: str
    path: str
    body: dict = field(default_factory=dict)
    headers: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)
    """Path parameters captured by the router, e.g. ``order_id`` in ``/v1/orders/{order_id}``."""

    def header(self, name: str, default: str | None = None) -> str | None:
        """Return a header's value, matching its name case-insensitively."""
        wanted = name.lower()
        for key, value in self.headers.items():
            if key.lower() == wanted:
                return value
        return default


@dataclass(frozen=True)
class Response:
    """What a handler answers: a status code and a JSON body."""

    status: int
    body: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True for 2xx and 3xx answers."""
        return 200 <= self.status < 400


def json_response(status_code: int, /, **body) -> Response:
    """A response whose body is the keyword arguments (``status`` may be one of them)."""
    return Response(status_code, dict(body))


def error_response(status: int, code: str, message: str) -> Response:
    """The error envelope every shop service uses: ``{"error": {"code": ..., "message": ...}}``."""
    return Response(status, {"error": {"code": code, "message": message}})


Handler = Callable[[Request], Response]


class Router:
    """Dispatches a request to the handler registered for its method and path pattern."""

    def __init__(self) -> None:
        self._routes: list[tuple[str, list[str], Handler]] = []

    def add(self, method: str, pattern: str, handler: Handler) -> None:
        """Register `handler` for `method` on `pattern` (segments like ``{sku}`` capture)."""
        self._routes.append((method.upper(), _segments(pattern), handler))

    def dispatch(self, request: Request) -> Response:
        """Call the matching handler; 404 for an unknown path, 405 for a wrong method."""
        segments = _segments(request.path)
        path_known = False
        for method, pattern, handler in self._routes:
            params = _match(pattern, segments)
            if params is None:
                continue
            path_known = True
            if method == request.method.upper():
                return handler(replace(request, params=params))
        if path_known:
            return error_response(405, "method_not_allowed",
                                  f"{request.method} is not allowed on {request.path}")
        return error_response(404, "not_found", f"no route for {request.method} {request.path}")


class ServiceApp:
    """Base class of a service's app: a router, and a catch-all that turns a crash into a 500."""

    service = "service"
    """The service's name in the mesh, used in logs."""

    def __init__(self) -> None:
        self.router = Router()
        self.router.add("GET", "/healthz", self.healthz)

    def healthz(self, request: Request) -> Response:
        """Readiness probe: the pod is up and its routes are registered."""
        return json_response(200, status="ok", service=self.service)

    def handle(self, request: Request) -> Response:
        """Serve one request; an unexpected exception is logged and answered with a 500."""
        try:
            return self.router.dispatch(request)
        except Exception:
            log.exception("%s: unhandled error on %s %s", self.service, request.method, request.path)
            return error_response(500, "internal", "internal error")


def _segments(path: str) -> list[str]:
    return [part for part in path.split("?", 1)[0].strip("/").split("/") if part]


def _match(pattern: list[str], segments: list[str]) -> dict | None:
    if len(pattern) != len(segments):
        return None
    params = {}
    for expected, actual in zip(pattern, segments):
        if expected.startswith("{") and expected.endswith("}"):
            params[expected[1:-1]] = actual
        elif expected != actual:
            return None
    return params
