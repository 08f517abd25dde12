"""How services call each other: the Transport protocol and its in-process implementation.

In the cluster a call goes through the mesh sidecar over HTTP; a sidecar that finds no ready
endpoint answers at once, which callers see as :class:`UpstreamUnavailable`. Tests and the local
dev stack use :class:`InProcessTransport`, which hands the request straight to the target app.
"""

from __future__ import annotations

from typing import Protocol

from shop_common.http import Request, Response


class UpstreamError(Exception):
    """Base class of failures to get an answer from another service."""

    def __init__(self, service: str, detail: str) -> None:
        super().__init__(f"{service}: {detail}")
        self.service = service
        self.detail = detail


class UpstreamUnavailable(UpstreamError):
    """Raised when no ready endpoint of the upstream accepts the request."""


class UpstreamTimeout(UpstreamError):
    """Raised when the upstream does not answer within the caller's deadline."""


class App(Protocol):
    """Anything that serves requests: every service's app."""

    def handle(self, request: Request) -> Response: ...


class Transport(Protocol):
    """Sends a request to a named service and returns its answer."""

    def send(self, service: str, request: Request, timeout_s: float = 5.0) -> Response: ...


class InProcessTransport:
    """Delivers requests to apps registered in this process (tests, local dev stack)."""

    def __init__(self, apps: dict[str, App] | None = None) -> None:
        self._apps: dict[str, App] = dict(apps or {})
        self.calls: list[tuple[str, str, str]] = []
        """Every (service, method, path) sent, in order."""

    def register(self, service: str, app: App) -> None:
        """Serve `service` with `app` from now on."""
        self._apps[service] = app

    def unregister(self, service: str) -> None:
        """Take `service` away, as if none of its pods were ready."""
        self._apps.pop(service, None)

    def send(self, service: str, request: Request, timeout_s: float = 5.0) -> Response:
        """Hand `request` to the app serving `service`."""
        self.calls.append((service, request.method, request.path))
        app = self._apps.get(service)
        if app is None:
            raise UpstreamUnavailable(service, "no healthy endpoints")
        return app.handle(request)
