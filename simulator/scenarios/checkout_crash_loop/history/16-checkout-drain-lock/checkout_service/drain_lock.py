"""checkout-service: one order-drain worker per pod.

The drain worker moves paid orders from the outbox to order-service; two in one pod would send
an order twice. It takes DRAIN_LOCK_FILE, in the pod's emptyDir, at start and removes it on a
clean shutdown. The container runs ``python -m checkout_service.drain_lock`` before starting
the worker; it exits 3 while the lock is held.
"""

from __future__ import annotations

import logging
import os
import sys

log = logging.getLogger("checkout-service")

DRAIN_LOCK_FILE = "/var/run/checkout/order-drain.lock"


def acquire() -> int | None:
    """Take the lock for this process; the pid that holds it when it is taken already."""
    try:
        fd = os.open(DRAIN_LOCK_FILE, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        with open(DRAIN_LOCK_FILE, encoding="utf-8") as f:
            return int(f.read().strip() or 0)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(str(os.getpid()))
    return None


def release() -> None:
    if os.path.exists(DRAIN_LOCK_FILE):
        os.remove(DRAIN_LOCK_FILE)


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    holder = acquire()
    if holder is not None:
        log.critical("order-drain lock %s is held by pid %s; refusing to run a second worker,"
                     " exiting", DRAIN_LOCK_FILE, holder)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
