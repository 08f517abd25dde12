"""A throwaway PostgreSQL cluster for tests and benches: initdb and pg_ctl in a temporary folder.

The cluster listens on a Unix socket in its own folder only (no TCP port at all), runs as an
unprivileged user when the tests run as root (PostgreSQL refuses to run as root: `nobody`), and
is stopped and removed at the end. `pg_ctl start -w` and `stop -w` wait on the server's state.
Debian's `postgresql` package provides the programs (.ci/run installs it when missing).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg


def postgres_bin() -> Path | None:
    """The folder of initdb and pg_ctl (the newest installed), or None."""
    found = shutil.which("initdb")
    if found is not None:
        return Path(found).resolve().parent
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4])
    )
    return Path(candidates[-1]).parent if candidates else None


class Cluster:
    """A cluster in `folder`: `url(name)` for a database in it, `new_database()` for a fresh one,
    `stop()` and `start()` to take it away and bring it back (as an outage would)."""

    def __init__(self, folder: Path, bindir: Path, options: str, run_as: dict[str, Any]) -> None:
        self.folder = folder
        self.user = "metasre"
        self._pg_ctl = [str(bindir / "pg_ctl"), "-D", str(folder / "data")]
        self._options = options
        self._run_as = run_as

    def url(self, dbname: str = "postgres") -> str:
        """A libpq URL of database `dbname` over the cluster's socket."""
        return f"postgresql://{self.user}@/{dbname}?host={self.folder}"

    def new_database(self) -> str:
        """A new empty database's URL (each test its own: nothing leaks between tests)."""
        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"'.encode())
        return self.url(name)

    def start(self) -> None:
        """Start the server and wait until it accepts connections (`pg_ctl -w`)."""
        log = str(self.folder / "log")
        self._ctl("-l", log, "-o", self._options, "-w", "-t", "60", "start")

    def stop(self) -> None:
        """Stop the server at once (no shutdown checkpoint) and wait until it has."""
        self._ctl("-m", "immediate", "-w", "-t", "60", "stop")

    def _ctl(self, *args: str) -> None:
        subprocess.run(
            [*self._pg_ctl, *args], check=True, capture_output=True, cwd=self.folder, **self._run_as
        )


INITDB = ("--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions")
"""Trust on the cluster's own socket (in a folder only its user and root can reach)."""


@contextmanager
def running_cluster(*, fsync: bool = False) -> Iterator[Cluster]:
    """Start a cluster, yield it, stop it and remove its folder.

    `fsync` off by default: the tests kill clients and servers of ours, never the machine, and
    a commit is on the server either way; the bench measures with it on, as in production. The
    stop is immediate (no shutdown checkpoint): the folder is thrown away.

    Raises:
        FileNotFoundError: PostgreSQL's programs are not installed.
    """
    bindir = postgres_bin()
    if bindir is None:
        raise FileNotFoundError("initdb (Debian's postgresql package) is not installed")
    folder = Path(tempfile.mkdtemp(prefix="metasre-pg-"))
    run_as: dict[str, Any] = {}
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody")
        os.chown(folder, nobody.pw_uid, nobody.pw_gid)
        run_as = {"user": nobody.pw_uid, "group": nobody.pw_gid, "extra_groups": []}
    options = f"-k {folder} -c listen_addresses='' -c max_connections=200"
    if not fsync:
        options += " -c fsync=off -c full_page_writes=off"
    cluster = Cluster(folder, bindir, options, run_as)
    try:
        subprocess.run(
            [str(bindir / "initdb"), "-D", str(folder / "data"), "-U", cluster.user, *INITDB],
            check=True,
            capture_output=True,
            cwd=folder,
            **run_as,
        )
        cluster.start()
        try:
            yield cluster
        finally:
            cluster.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
