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
    """A running cluster; `url(name)` for a database in it, `new_database()` for a fresh one."""

    def __init__(self, folder: Path, user: str = "metasre") -> None:
        self.folder = folder
        self.user = user

    def url(self, dbname: str = "postgres") -> str:
        """A libpq URL of database `dbname` over the cluster's socket."""
        return f"postgresql://{self.user}@/{dbname}?host={self.folder}"

    def new_database(self) -> str:
        """A new empty database's URL (each test its own: nothing leaks between tests)."""
        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"'.encode())
        return self.url(name)


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
    run_as: dict[str, object] = {}
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody")
        os.chown(folder, nobody.pw_uid, nobody.pw_gid)
        run_as = {"user": nobody.pw_uid, "group": nobody.pw_gid, "extra_groups": []}
    data = folder / "data"
    pg_ctl = [str(bindir / "pg_ctl"), "-D", str(data)]
    try:
        subprocess.run(
            [
                str(bindir / "initdb"),
                "-D",
                str(data),
                "-U",
                "metasre",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
                "--no-instructions",
            ],
            check=True,
            capture_output=True,
            cwd=folder,
            **run_as,  # type: ignore[call-overload]
        )
        options = f"-k {folder} -c listen_addresses='' -c max_connections=200"
        if not fsync:
            options += " -c fsync=off -c full_page_writes=off"
        subprocess.run(
            [*pg_ctl, "-l", str(folder / "log"), "-o", options, "-w", "-t", "60", "start"],
            check=True,
            capture_output=True,
            cwd=folder,
            **run_as,  # type: ignore[call-overload]
        )
        try:
            yield Cluster(folder)
        finally:
            subprocess.run(
                [*pg_ctl, "-m", "immediate", "-w", "-t", "60", "stop"],
                capture_output=True,
                cwd=folder,
                **run_as,  # type: ignore[call-overload]
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
