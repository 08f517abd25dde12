"""A small JSON-over-HTTP server for a service app, on the standard library's http.server.

Each service's container runs ``serve(app, port)``; TLS and retries are the sidecar's job.
"""

from __future__ import annotations

import json
import logging
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from shop_common.http import Request
from shop_common.transport import App

log = logging.getLogger("shop_common.server")


def serve(app: App, port: int = 8080) -> None:
    """Serve `app` on `port` until the process is stopped."""

    class _Handler(BaseHTTPRequestHandler):
        def _dispatch(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else {}
            except ValueError:
                body = None
            if not isinstance(body, dict):
                self._reply(400, {"error": {"code": "bad_json", "message": "body must be a JSON object"}})
                return
            request = Request(self.command, self.path, body, dict(self.headers.items()))
            response = app.handle(request)
            self._reply(response.status, response.body)

        def _reply(self, status: int, body: dict) -> None:
            payload = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_PATCH = do_DELETE = _dispatch

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib name
            log.debug(format, *args)

    server = ThreadingHTTPServer(("0.0.0.0", port), _Handler)
    log.info("listening on :%d", port)
    server.serve_forever()
