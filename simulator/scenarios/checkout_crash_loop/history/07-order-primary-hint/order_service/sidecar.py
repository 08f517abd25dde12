"""The cluster Transport: calls go through the mesh sidecar as JSON over HTTP.

A sidecar that finds no ready endpoint answers 503 at once (:class:`UpstreamUnavailable`); a
call that gets no answer within its deadline is an :class:`UpstreamTimeout`.
"""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request

from shop_common import Request, Response, UpstreamTimeout, UpstreamUnavailable

NO_ENDPOINTS = "no healthy upstream"


class SidecarTransport:
    """Sends requests to ``<sidecar>/<service><path>``."""

    def __init__(self, sidecar_url: str) -> None:
        self._base = sidecar_url.rstrip("/")

    def send(self, service: str, request: Request, timeout_s: float = 5.0) -> Response:
        data = json.dumps(request.body).encode() if request.method != "GET" else None
        outgoing = urllib.request.Request(
            f"{self._base}/{service}{request.path}", data=data, method=request.method,
            headers={"Content-Type": "application/json", **request.headers})
        try:
            with urllib.request.urlopen(outgoing, timeout=timeout_s) as answer:
                return Response(answer.status, json.loads(answer.read() or b"{}"))
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            if exc.code == 503 and NO_ENDPOINTS in raw.decode(errors="replace"):
                raise UpstreamUnavailable(service, "no ready endpoints") from exc
            return Response(exc.code, json.loads(raw or b"{}"))
        except (socket.timeout, TimeoutError) as exc:
            raise UpstreamTimeout(service, f"timed out after {timeout_s} s") from exc
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, (socket.timeout, TimeoutError)):
                raise UpstreamTimeout(service, f"timed out after {timeout_s} s") from exc
            raise UpstreamUnavailable(service, str(exc.reason)) from exc
