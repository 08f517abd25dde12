"""`metasre report --serve`: the same page served on loopback, rebuilt as its inputs grow.

A running `metasre serve` (or rollout, experiment, demo) commits every applied call to its
store before acknowledging it, so the store is the live record: the page asks `/version` every
few seconds and reloads when an input changed, and the server rebuilds the page at most once per
change. Only finished episodes are shown, as in the written report.

It listens on loopback only (the command line refuses any other --host): the page shows every
trajectory to whoever reaches it, and nothing here checks who that is. SIGINT (Ctrl-C) or SIGTERM
stops it: the listening socket is closed and the command exits 0.
"""

from __future__ import annotations

import errno
import hashlib
import html
import http.server
import signal
import socket
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from ..errors import AddressInUseError, UsageError
from .page import build_report
from .sources import parse_input, read_runs

POLL_MS = 2000
"""How often the served page asks whether an input changed."""
RELOADER = (
    "<script>(() => {{ let seen = {version!r}; setInterval(async () => {{ try {{"
    " const now = await (await fetch('/version', {{cache: 'no-store'}})).text();"
    " if (now !== seen) {{ seen = now; location.reload(); }} }} catch (e) {{}} }}, {ms}); }})();"
    "</script>"
)


def version_of(inputs: Sequence[str]) -> str:
    """A fingerprint of the inputs' files and a store's WAL: changes when one is written.

    Reading a store nobody else has open creates its WAL and deletes it again on close: an
    empty or missing WAL counts as no WAL, or every rebuild would change the version and the
    page would reload for ever. A writer (a running server) keeps its WAL, which grows or is
    rewritten (a new mtime) with each commit, and a checkpoint writes the store itself.
    """
    parts = []
    for text in inputs:
        _, path = parse_input(text)
        for p in (path, Path(f"{path}-wal")):
            try:
                st = p.stat()
            except OSError:
                st = None
            if st is None or (p != path and st.st_size == 0):
                parts.append(f"{p}:-")
            else:
                parts.append(f"{p}:{st.st_mtime_ns}:{st.st_size}")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


class BuildFailed(Exception):
    """Raised when the inputs, as they are at `version`, do not make a page."""

    def __init__(self, message: str, version: str) -> None:
        super().__init__(message)
        self.message = message
        self.version = version


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
                try:
                    page = build_report(read_runs(self.inputs), title=self.title).html
                except Exception as exc:  # a store mid-write, a file replaced: say it, retry
                    message = getattr(exc, "message", None) or str(exc)
                    raise BuildFailed(message, version) from exc
                reload = RELOADER.format(version=version, ms=POLL_MS)
                self._html = page.replace("</body>", reload + "</body>", 1).encode()
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
            except BuildFailed as exc:  # a bad input must not stop the server
                on_error(exc.message)
                self._send(503, "text/html; charset=utf-8", error_page(exc))
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


def error_page(failed: BuildFailed) -> bytes:
    """A page saying why the report cannot be built, reloaded like the report when inputs change."""
    return (
        '<!doctype html><html><head><meta charset="utf-8"><title>report: cannot build</title>'
        f"</head><body><p>cannot build the report: {html.escape(failed.message)}</p>"
        "<p>This page reloads when an input changes.</p>"
        + RELOADER.format(version=failed.version, ms=POLL_MS)
        + "</body></html>"
    ).encode()


def serve(inputs: Sequence[str], title: str, host: str, port: int) -> None:
    """Serve the live page on `host` (a loopback address) until SIGINT or SIGTERM.

    Prints its address once listening and a line when stopped.
    """
    live = LivePage(inputs, title)

    def complain(message: str) -> None:
        print(f"report: {message}", file=sys.stderr, flush=True)

    class Server(http.server.ThreadingHTTPServer):
        address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        daemon_threads = True  # a page being sent does not hold up the stop

    try:
        server = Server((host, port), handler(live, complain))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise AddressInUseError(
                f"port {port} on {host} is in use; pick another --port (0: any free one)"
            ) from None
        # ::1 where IPv6 is off, a port below 1024 without the right: the flag's fault, said so.
        raise UsageError(
            f"cannot listen on {host} port {port}: {exc.strerror}; try --host 127.0.0.1 or "
            "another --port"
        ) from None
    try:
        live.page()  # an input that cannot be read: the command says why, nothing is served
    except BuildFailed as exc:
        server.server_close()
        raise exc.__cause__ or exc from None
    stopping = threading.Event()

    def stop(signum: int, frame: FrameType | None) -> None:
        # shutdown() waits for serve_forever, which runs on this (the main) thread: from another.
        if not stopping.is_set():
            stopping.set()
            threading.Thread(target=server.shutdown, daemon=True).start()

    previous: dict[signal.Signals, Any] = {}
    if threading.current_thread() is threading.main_thread():
        previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    shown = f"[{host}]" if ":" in host else host
    print(
        f"report: serving http://{shown}:{server.server_address[1]}/ (Ctrl-C stops)",
        file=sys.stderr,
        flush=True,
    )
    try:
        server.serve_forever(poll_interval=0.5)
    finally:
        for sig, before in previous.items():
            signal.signal(sig, before)
        server.server_close()
    print("report: stopped serving", file=sys.stderr, flush=True)
