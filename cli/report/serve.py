"""`metasre report --serve`: the same page served on loopback, rebuilt as its inputs grow.

A running `metasre serve` (or rollout, experiment, demo) commits every applied call to its
store before acknowledging it, so the store is the live record: the page asks `/version` every
few seconds and reloads when an input changed, and the server rebuilds the page at most once per
change. Only finished episodes are shown, as in the written report.
"""

from __future__ import annotations

import errno
import hashlib
import http.server
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from metasre.cli.errors import AddressInUseError
from metasre.cli.report.page import build_report
from metasre.cli.report.sources import parse_input, read_runs

POLL_MS = 2000
"""How often the served page asks whether an input changed."""
RELOADER = (
    "<script>(() => {{ let seen = {version!r}; setInterval(async () => {{ try {{"
    " const now = await (await fetch('/version', {{cache: 'no-store'}})).text();"
    " if (now !== seen) {{ seen = now; location.reload(); }} }} catch (e) {{}} }}, {ms}); }})();"
    "</script>"
)


def version_of(inputs: Sequence[str]) -> str:
    """A fingerprint of the inputs' files (and a store's WAL): changes when one is written."""
    parts = []
    for text in inputs:
        _, path = parse_input(text)
        for p in (path, Path(f"{path}-wal")):
            try:
                st = p.stat()
            except OSError:
                parts.append(f"{p}:-")
                continue
            parts.append(f"{p}:{st.st_mtime_ns}:{st.st_size}")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


class LivePage:
    """The page of `inputs`, rebuilt when `version_of` changes; safe across threads."""

    def __init__(self, inputs: Sequence[str], title: str) -> None:
        self.inputs = list(inputs)
        self.title = title
        self._lock = threading.Lock()
        self._version = ""
        self._html = b""

    def page(self) -> tuple[str, bytes]:
        """(version, page bytes), rebuilt if an input changed since the last build."""
        with self._lock:
            version = version_of(self.inputs)
            if version != self._version:
                html = build_report(read_runs(self.inputs), title=self.title).html
                reload = RELOADER.format(version=version, ms=POLL_MS)
                self._html = html.replace("</body>", reload + "</body>", 1).encode()
                self._version = version
            return self._version, self._html


def handler(
    live: LivePage, on_error: Callable[[str], None]
) -> type[http.server.BaseHTTPRequestHandler]:
    """The request handler: `/` the page, `/version` the inputs' fingerprint."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.split("?")[0] == "/version":
                self._send(200, "text/plain", version_of(live.inputs).encode())
                return
            if self.path.split("?")[0] not in ("/", "/index.html"):
                self._send(404, "text/plain", b"not found: the report is at /\n")
                return
            try:
                _, body = live.page()
            except Exception as exc:  # a bad input must not stop the server: say it, retry later
                message = getattr(exc, "message", None) or str(exc)
                on_error(message)
                self._send(503, "text/plain", f"cannot build the report: {message}\n".encode())
                return
            self._send(200, "text/html; charset=utf-8", body)

        def _send(self, status: int, kind: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass  # one line per poll would drown the terminal

    return Handler


def serve(inputs: Sequence[str], title: str, host: str, port: int) -> None:
    """Serve the live page until Ctrl-C; prints its address first."""
    live = LivePage(inputs, title)
    live.page()  # fail before listening when an input cannot be read

    def complain(message: str) -> None:
        print(f"report: {message}", file=sys.stderr, flush=True)

    try:
        server = http.server.ThreadingHTTPServer((host, port), handler(live, complain))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise AddressInUseError(
                f"port {port} on {host} is in use; pick another --port (0: any free one)"
            ) from None
        raise
    server.daemon_threads = True
    address = f"http://{host}:{server.server_address[1]}/"
    print(f"report: serving {address} (Ctrl-C stops)", file=sys.stderr, flush=True)
    try:
        server.serve_forever(poll_interval=0.5)
    finally:
        server.server_close()
