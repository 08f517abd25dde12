"""user-service: find the postgres-db primary once per pod, not once per container start.

Resolving the primary through the service record took seconds during the last maintenance,
and kubelet restarts were eating into the readiness budget. The primary found at a pod's first
start is kept in PRIMARY_HINT_FILE, in the pod's emptyDir: it survives container restarts
within the pod, and a new pod starts without one. The container runs
``python -m user_service.startup`` before serving; it exits 1 when the primary it uses cannot take
writes.
"""

from __future__ import annotations

import logging
import os
import sys

log = logging.getLogger("user-service")

PRIMARY_HINT_FILE = "/var/run/users/pg-primary"
SERVICE_RECORD = "postgres-db-primary.shop.svc"


def _read_hint() -> str | None:
    if not os.path.exists(PRIMARY_HINT_FILE):
        return None
    with open(PRIMARY_HINT_FILE, encoding="utf-8") as f:
        return f.read().strip() or None


def _write_hint(host: str) -> None:
    with open(PRIMARY_HINT_FILE, "w", encoding="utf-8") as f:
        f.write(host)


def primary_host(resolve) -> str:
    """The cached primary if this pod has one, else the one the service record names now."""
    hint = _read_hint()
    if hint:
        return hint
    host = resolve(SERVICE_RECORD)
    _write_hint(host)
    return host


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    import socket

    import psycopg  # the driver is only in the container image

    host = primary_host(socket.getfqdn)
    try:
        with psycopg.connect(host=host, dbname="users") as conn:
            conn.execute("INSERT INTO startup_checks (service) VALUES (%s)", ("user-service",))
    except psycopg.errors.ReadOnlySqlTransaction as exc:
        log.critical("the cached primary %s (%s) refuses writes: %s; stale connection target,"
                     " exiting", host, PRIMARY_HINT_FILE, exc)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
