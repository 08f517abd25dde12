"""`metasre serve` as a child process: started, stopped, and kept alive in a fleet's slot.

The fleet's supervisor (`metasre serve --workers N`) and a fleet on Ray keep their shards with
`ShardKeeper`; the load test and the tests that need a server of their own (a restart,
SIGTERM, SIGKILL) start one with `start_serve`. A library home, so that neither imports the
command line.
"""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

import structlog

from .config import is_store_url

log = structlog.get_logger("metasre.service.process")

RESTART_PAUSE_SECONDS = 0.5
"""The pause before a shard that died is started again (no tight loop on a shard that cannot
start); doubled on each death in a row, up to `RESTART_PAUSE_MAX_SECONDS`."""
RESTART_PAUSE_MAX_SECONDS = 30.0


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


def shard_store(store: str, slot: int) -> str:
    """The store of shard `slot`: its own SQLite file beside `store`, or the shared database."""
    if is_store_url(store):
        return store
    path = Path(store)
    return str(path.with_name(f"{path.stem}.s{slot}{path.suffix}"))


def free_ports(host: str, n: int) -> list[int]:
    """`n` ports the OS calls free now (held together, so they differ)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    probes = []
    try:
        for _ in range(n):
            probe = socket.socket(family, socket.SOCK_STREAM)
            probes.append(probe)
            probe.bind((host, 0))
        return [p.getsockname()[1] for p in probes]
    finally:
        for probe in probes:
            probe.close()


class ShardKeeper:
    """One slot of a fleet: its `metasre serve` process, started again whenever it dies.

    Args:
        slot: The slot.
        args: `metasre serve`'s arguments for the slot's process (its port, slot and store).
        verbose: Pass `-v` to the shard.
        on_restart: Called after the slot's process was started again.
    """

    def __init__(
        self,
        slot: int,
        args: list[str],
        *,
        verbose: bool = False,
        on_restart: Callable[[int], None] | None = None,
    ) -> None:
        self.slot = slot
        self.args = args
        self.verbose = verbose
        self.on_restart = on_restart
        self.proc: asyncio.subprocess.Process | None = None
        self.restarts = 0
        """How many times the slot's process was started again after it died."""
        self.stopping = False

    async def start(self) -> None:
        """Start the slot's process and wait until it serves.

        Raises:
            RuntimeError: it exited before it served.
        """
        proc, _ = await start_serve(
            *self.args,
            verbose=self.verbose,
            stderr=None,  # the shards log where the supervisor does
            timeout=120.0,
        )
        self.proc = proc
        log.info("shard_serving", slot=self.slot, pid=proc.pid)

    async def keep(self) -> None:
        """Start the process again whenever it dies, until `stop`."""
        pause = RESTART_PAUSE_SECONDS
        while not self.stopping:
            proc = self.proc
            assert proc is not None
            code = await proc.wait()
            if self.stopping:
                return
            log.error("shard_died", slot=self.slot, pid=proc.pid, exit_code=code)
            while not self.stopping:
                await asyncio.sleep(pause)
                pause = min(RESTART_PAUSE_MAX_SECONDS, pause * 2)
                try:
                    await self.start()
                except (RuntimeError, TimeoutError, OSError) as exc:
                    log.error("shard_restart_failed", slot=self.slot, error=str(exc))
                    continue
                self.restarts += 1
                if self.on_restart is not None:
                    self.on_restart(self.slot)
                pause = RESTART_PAUSE_SECONDS
                break

    async def stop(self, grace_seconds: float) -> None:
        """Stop keeping the process, and drain it (killed past `grace_seconds`)."""
        self.stopping = True
        if self.proc is not None:
            await stop_child(self.proc, grace_seconds)


__all__ = [
    "RESTART_PAUSE_MAX_SECONDS",
    "RESTART_PAUSE_SECONDS",
    "ShardKeeper",
    "free_ports",
    "shard_store",
    "start_serve",
    "stop_child",
]
