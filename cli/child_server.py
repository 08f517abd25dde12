"""`metasre serve` as a child process: started, and its address read from its first line.

The load test and the tests that need a server of its own (a restart, SIGTERM, SIGKILL) all
start it this way.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any


async def start_serve(
    *args: str,
    verbose: bool = False,
    stderr: int | IO[Any] | None = None,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 60.0,
    new_session: bool = False,
) -> tuple[asyncio.subprocess.Process, str]:
    """Run `metasre [-v] serve *args`; the process and the address it serves on, once it does.

    The caller owns the process and stops it. `stderr` is where the server's logs go.
    `new_session`: out of the terminal's process group, so that Ctrl-C reaches the caller
    only, which stops the server in its own time.

    Raises:
        RuntimeError: the server exited (or said nothing) before it was ready; it is killed.
    """
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "metasre.cli.main",
        *(("-v",) if verbose else ()),
        "serve",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=stderr,
        cwd=cwd,
        env=dict(env) if env is not None else None,
        start_new_session=new_session,
    )
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), timeout)
        if not line:
            raise RuntimeError("metasre serve exited before it was ready")
        address: str = json.loads(line)["address"]
        return proc, address
    except BaseException:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        raise


async def stop_child(proc: asyncio.subprocess.Process, timeout: float = 30.0) -> None:
    """SIGTERM a child server and wait for it to drain; killed if it takes over `timeout`."""
    if proc.returncode is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        await asyncio.wait_for(proc.wait(), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
