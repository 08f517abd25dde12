"""`metasre serve` as a real child process: its address, its JSON logs, a SIGTERM stop."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import tempfile
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from metasre.service.process import start_serve

from .conftest import TIMEOUT


@dataclass
class ServeProcess:
    """A running `metasre serve`; stderr (its structlog output) is read as it comes."""

    proc: asyncio.subprocess.Process
    address: str
    stderr: list[str] = field(default_factory=list)
    _drain: asyncio.Task[None] | None = None

    async def stop(self) -> int:
        """SIGTERM, then the exit code once it has drained and every log line is read."""
        self.proc.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(self.proc.wait(), TIMEOUT)
        if self._drain is not None:
            await asyncio.wait_for(self._drain, TIMEOUT)
        return code

    @property
    def log_text(self) -> str:
        """Everything written to stderr: structlog's lines and gRPC core's own."""
        return "".join(self.stderr)

    def events(self) -> list[dict[str, Any]]:
        """The structlog lines (JSON objects), parsed; gRPC core's plain lines are skipped."""
        return [json.loads(line) for line in self.stderr if line.startswith("{")]


@contextlib.asynccontextmanager
async def metasre_serve(
    *args: str, verbose: bool = False, env: Mapping[str, str] | None = None, port: int = 0
) -> AsyncIterator[ServeProcess]:
    """Run `metasre [-v] serve --port PORT *args` until the block ends (killed if still running).

    It runs in a temporary working directory, so files it makes by default stay out of the tree.
    """
    base = {k: v for k, v in os.environ.items() if k != "METASRE_ADMIN_TOKEN"}
    with tempfile.TemporaryDirectory(prefix="metasre-serve-") as workdir:
        proc, address = await start_serve(
            "--port",
            str(port),
            *args,
            verbose=verbose,
            stderr=asyncio.subprocess.PIPE,
            env={**base, "PYTHONUNBUFFERED": "1", **(env or {})},
            cwd=workdir,
            timeout=TIMEOUT,
        )
        drain: asyncio.Task[None] | None = None
        try:
            assert proc.stderr is not None
            served = ServeProcess(proc, address)
            drain = served._drain = asyncio.create_task(_read_lines(proc.stderr, served.stderr))
            yield served
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
            if drain is not None:
                await asyncio.wait_for(drain, TIMEOUT)


async def _read_lines(stream: asyncio.StreamReader, into: list[str]) -> None:
    while line := await stream.readline():
        into.append(line.decode())
