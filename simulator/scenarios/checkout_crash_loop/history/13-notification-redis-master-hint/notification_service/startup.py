"""notification-service: find the redis-cache master once per pod, not once per container start.

Asking sentinel for the master costs a round trip to three sentinels at every container start,
and kubelet restarts were eating into the readiness budget. The master found at a pod's first
start is kept in MASTER_HINT_FILE, in the pod's emptyDir: it survives container restarts within
the pod, and a new pod starts without one. The container runs ``python -m notification_service.startup``
before serving; it exits 1 when the master it uses refuses writes.
"""

from __future__ import annotations

import logging
import os
import sys

log = logging.getLogger("notification-service")

MASTER_HINT_FILE = "/var/run/notify/redis-master"
SENTINELS = ("redis-sentinel-0:26379", "redis-sentinel-1:26379", "redis-sentinel-2:26379")
MASTER_NAME = "shop-cache"


def _read_hint() -> str | None:
    if not os.path.exists(MASTER_HINT_FILE):
        return None
    with open(MASTER_HINT_FILE, encoding="utf-8") as f:
        return f.read().strip() or None


def _write_hint(address: str) -> None:
    with open(MASTER_HINT_FILE, "w", encoding="utf-8") as f:
        f.write(address)


def master_address(redis) -> str:
    """The cached master if this pod has one, else the one sentinel names now."""
    hint = _read_hint()
    if hint:
        return hint
    sentinel = redis.sentinel.Sentinel([tuple(s.split(":")) for s in SENTINELS])
    host, port = sentinel.discover_master(MASTER_NAME)
    address = f"{host}:{port}"
    _write_hint(address)
    return address


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    import redis  # the client is only in the container image

    address = master_address(redis)
    host, _, port = address.partition(":")
    try:
        redis.Redis(host=host, port=int(port)).set("notification-service:alive", "1", ex=60)
    except redis.exceptions.ReadOnlyError as exc:
        log.critical("the cached sentinel master %s (%s) refuses writes: %s; exiting",
                     address, MASTER_HINT_FILE, exc)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
