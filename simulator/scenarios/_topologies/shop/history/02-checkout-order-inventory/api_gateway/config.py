"""api-gateway configuration: the public route table, upstream deadlines and auth policy."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Route:
    """One public path prefix and the upstream service that serves it."""

    prefix: str
    """Public path prefix, matched by whole segments (``/v1/users`` matches ``/v1/users/42``)."""
    service: str
    """Upstream service name in the mesh."""
    auth: bool = True
    """Whether the route requires a valid bearer token."""
    timeout_s: float = 5.0
    """Deadline for the upstream's answer; past it the gateway answers 504."""


ROUTES: tuple[Route, ...] = (
    Route("/v1/auth", "auth-service", auth=False, timeout_s=2.0),
    Route("/v1/users", "user-service"),
    Route("/v1/checkout", "checkout-service", timeout_s=15.0),
)

AUTH_SERVICE = "auth-service"
AUTH_VERIFY_PATH = "/v1/auth/verify"
AUTH_TIMEOUT_S = 1.5
"""Token checks are on every authenticated request: keep this deadline short."""

USER_ID_HEADER = "X-User-Id"
"""Set by the gateway from the verified token; a client-supplied value is dropped."""
