"""The gateway's request path: match a route, authenticate, forward, map upstream failures.

Upstream failures are never hidden from clients: an upstream 5xx or an upstream with no ready
endpoint becomes a 502, a missed deadline a 504. Clients retry on those, and the edge SLO
dashboards count them, so an outage behind the gateway stays visible at the edge.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from api_gateway import config
from shop_common import (
    Request,
    Response,
    Transport,
    UpstreamTimeout,
    UpstreamUnavailable,
    error_response,
)

log = logging.getLogger("api-gateway")


class Gateway:
    """Routes public requests to upstream services through a Transport."""

    def __init__(self, transport: Transport, routes: tuple[config.Route, ...] = config.ROUTES) -> None:
        self._transport = transport
        # Longest prefix first, so /v1/payments/refunds could override /v1/payments.
        self._routes = tuple(sorted(routes, key=lambda r: len(r.prefix), reverse=True))

    def route_for(self, path: str) -> config.Route | None:
        """The route serving `path`, or None."""
        path = path.split("?", 1)[0]
        for route in self._routes:
            if path == route.prefix or path.startswith(route.prefix + "/"):
                return route
        return None

    def handle(self, request: Request) -> Response:
        """Serve one public request."""
        if request.path == "/healthz":
            return Response(200, {"status": "ok"})
        route = self.route_for(request.path)
        if route is None:
            return error_response(404, "not_found", f"no route for {request.path}")
        headers = {k: v for k, v in request.headers.items()
                   if k.lower() != config.USER_ID_HEADER.lower()}
        if route.auth:
            user_id, failure = self._authenticate(request)
            if failure is not None:
                return failure
            headers[config.USER_ID_HEADER] = user_id
        return self._forward(route.service, replace(request, headers=headers), route.timeout_s)

    def _authenticate(self, request: Request) -> tuple[str | None, Response | None]:
        """Check the bearer token with auth-service: (user_id, None) or (None, error response)."""
        authorization = request.header("Authorization") or ""
        if not authorization.startswith("Bearer "):
            return None, error_response(401, "unauthenticated", "missing bearer token")
        verify = Request("POST", config.AUTH_VERIFY_PATH,
                         body={"token": authorization[len("Bearer "):]})
        answer = self._forward(config.AUTH_SERVICE, verify, config.AUTH_TIMEOUT_S)
        if answer.status == 401:
            return None, error_response(401, "unauthenticated", "invalid or expired token")
        if not answer.ok:
            return None, answer
        return answer.body["user_id"], None

    def _forward(self, service: str, request: Request, timeout_s: float) -> Response:
        """Send `request` upstream and translate transport failures and 5xx answers."""
        try:
            response = self._transport.send(service, request, timeout_s=timeout_s)
        except UpstreamTimeout:
            log.error("upstream %s timed out after %.1fs for %s %s; answering 504",
                      service, timeout_s, request.method, request.path)
            return error_response(504, "upstream_timeout", f"upstream {service} timed out")
        except UpstreamUnavailable as exc:
            log.error("upstream %s unavailable for %s %s: %s; answering 502",
                      service, request.method, request.path, exc.detail)
            return error_response(502, "bad_gateway", f"upstream {service} unavailable")
        if response.status >= 500:
            log.error("upstream %s returned %d for %s %s; answering 502",
                      service, response.status, request.method, request.path)
            return error_response(502, "bad_gateway", f"upstream {service} failed")
        return response
