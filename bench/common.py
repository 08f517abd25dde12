"""What the benchmark sections share: servers in their own processes, percentiles, table rows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from metasre.agents.client import AgentConnection
from metasre.v1 import agent_pb2

ROOT = Path(__file__).resolve().parent.parent
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the table."""

    section: str
    measure: str
    value: float
    unit: str
    reference: float | None = None
    """The side-by-side baseline measured in the same run, if any."""
    ratio: float | None = None
    target: str = ""
    holds: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class ServerProcess:
    """`python -m bench._serve KIND` in a child process; its address, RSS and CPU time.

    `trace` runs it with `bench._trace` installed: `trace_reset` starts a window and `trace`
    returns the server's own view of it (call times, store commits, event-loop lag). `extra`:
    more arguments for `bench._serve` (experiments).
    """

    def __init__(
        self,
        kind: str,
        *,
        store: bool = False,
        max_sessions: int = 4096,
        profile: Path | None = None,
        trace: bool = False,
        extra: tuple[str, ...] = (),
    ) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="metasre-bench-")
        serve = [sys.executable, "-m", "bench._serve", kind, "--max-sessions", str(max_sessions)]
        if store:
            serve += ["--store", str(Path(self._tmp.name) / "bench.db")]
        if trace:
            serve += ["--trace"]
        serve += extra
        cmd = list(serve)
        profile = profile or _profile_path(kind)
        if profile is not None:
            cmd += ["--profile", str(profile)]
        spy = os.environ.get("BENCH_PYSPY")  # DIR: record each META-SRE server with py-spy
        if spy and kind == "metasre":
            out = Path(spy) / f"server-{time.time_ns()}.txt"
            cmd = ["py-spy", "record", "--format", "raw", "--rate", "200", "-o", str(out)]
            cmd += ["--gil"] if os.environ.get("BENCH_PYSPY_GIL") else []
            cmd += ["--"]
            cmd += serve
        path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
        env = dict(os.environ, PYTHONPATH=path)
        self._proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        while line and not line.startswith("{"):  # py-spy says hello first
            line = self._proc.stdout.readline()
        if not line:
            self.close()
            raise RuntimeError(f"the {kind} server did not start")
        info = json.loads(line)
        self.address: str = info["address"]
        self.pid: int = info["pid"]

    def tell(self, command: str) -> None:
        """Send one command line to the server (see `bench._serve`)."""
        assert self._proc.stdin is not None
        self._proc.stdin.write(command + "\n")
        self._proc.stdin.flush()

    def ask(self, command: str) -> dict[str, Any]:
        """Send a command the server answers with one JSON line, and return the answer."""
        self.tell(command)
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        while line and not line.startswith("{"):
            line = self._proc.stdout.readline()
        result: dict[str, Any] = json.loads(line) if line else {}
        return result

    def trace_reset(self) -> None:
        """Start a new trace window (a server started with `trace`)."""
        self.tell("trace-reset")

    def trace(self) -> dict[str, Any]:
        """The server's summary of the window since `trace_reset` ({} without `trace`)."""
        return self.ask("trace")

    def rss_kib(self) -> int:
        """Resident set size of the server process, KiB."""
        with open(f"/proc/{self.pid}/statm") as f:
            return int(f.read().split()[1]) * PAGE_KIB

    def cpu_seconds(self) -> float:
        """User plus system CPU time of the server process so far (all its threads)."""
        with open(f"/proc/{self.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS

    def close(self) -> None:
        if self._proc.poll() is None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            try:
                self._proc.wait(15)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._tmp.cleanup()

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _profile_path(kind: str) -> Path | None:
    # BENCH_PROFILE=DIR: every META-SRE server writes cProfile stats into DIR.
    folder = os.environ.get("BENCH_PROFILE")
    if not folder or kind != "metasre":
        return None
    Path(folder).mkdir(parents=True, exist_ok=True)
    return Path(folder) / f"server-{time.time_ns()}.prof"


class EchoStub:
    """Stands in for AgentServiceStub so the same AgentConnection drives the echo service."""

    def __init__(self, channel: Any) -> None:
        from bench._serve import ECHO_METHOD

        self.Connect = channel.stream_stream(
            ECHO_METHOD,
            request_serializer=agent_pb2.ConnectRequest.SerializeToString,
            response_deserializer=agent_pb2.ConnectResponse.FromString,
        )


def echo_connection(channel: Any, n: int, *, batch_events: bool = True) -> AgentConnection:
    """An AgentConnection to the echo service (`n` groups streams as a session's seats)."""
    return AgentConnection(
        EchoStub(channel),  # type: ignore[arg-type]
        f"echo-{n}",
        "token",
        batch_events=batch_events,
    )


def machine() -> dict[str, Any]:
    """nproc, CPU model, Python version, load, commit."""
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((ln.split(":", 1)[1].strip() for ln in f if "model name" in ln), "")
    except OSError:
        pass
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        ).stdout.strip()
        commit += "+changes" if dirty else ""
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    return {
        "commit": commit,
        "nproc": os.cpu_count(),
        "cpu": model,
        "python": sys.version.split()[0],
        "load": [round(x, 2) for x in os.getloadavg()],
    }
