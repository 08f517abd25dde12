"""inventory-service entry point: wait for a mongo-db primary, then serve.

Kubernetes runs ``python -m inventory_service.main``. Without a primary the process exits 1
after STARTUP_PRIMARY_WAIT_S and the pod is restarted with back-off.

The primary found at start is remembered in PRIMARY_HINT_FILE (an emptyDir, so it survives
container restarts within the pod, and a new pod starts without one); ``_connect`` says how a
restarted container uses it.
"""

from __future__ import annotations

import logging
import os
import sys

from inventory_service import config
from inventory_service.handlers import InventoryApp
from inventory_service.store import StockStore

log = logging.getLogger("inventory-service")


def _read_hint() -> str | None:
    if not config.PRIMARY_HINT_FILE or not os.path.exists(config.PRIMARY_HINT_FILE):
        return None
    with open(config.PRIMARY_HINT_FILE, encoding="utf-8") as f:
        return f.read().strip() or None


def _write_hint(host: str) -> None:
    if config.PRIMARY_HINT_FILE:
        with open(config.PRIMARY_HINT_FILE, "w", encoding="utf-8") as f:
            f.write(host)


def mongo_uri() -> str:
    """The cached primary (direct connection) if there is one, else the replica-set seed list."""
    hint = _read_hint()
    if hint:
        return f"mongodb://{hint}/?directConnection=true"
    return config.MONGO_URI


def _forget_hint() -> None:
    if config.PRIMARY_HINT_FILE and os.path.exists(config.PRIMARY_HINT_FILE):
        os.remove(config.PRIMARY_HINT_FILE)


def _connect(pymongo):
    """A client on the rs0 primary and the primary's host, or (None, why not).

    A restarted container tries the primary named in the hint file first, which skips
    replica-set discovery. If that member is unreachable or no longer the primary (there was an
    election), the hint is dropped and the primary is discovered from the seed list.
    """
    why = "no mongo-db primary"
    for uri in dict.fromkeys([mongo_uri(), config.MONGO_URI]):
        client = pymongo.MongoClient(uri, serverSelectionTimeoutMS=config.STARTUP_PRIMARY_WAIT_S * 1000)
        try:
            hello = client.admin.command("hello")
        except pymongo.errors.ServerSelectionTimeoutError as exc:
            why = f"no mongo-db primary after {config.STARTUP_PRIMARY_WAIT_S}s via {uri}: {exc}"
        else:
            if hello.get("isWritablePrimary"):
                return client, str(hello.get("me"))
            why = f"{hello.get('me')} is not the rs0 primary (via {uri})"
        if uri != config.MONGO_URI:
            log.warning("%s; forgetting the cached primary, re-discovering rs0", why)
            _forget_hint()
    return None, why


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    import pymongo  # the driver is only in the container image

    client, found = _connect(pymongo)
    if client is None:
        log.critical("%s; exiting", found)
        return 1
    _write_hint(found)
    collection = client[config.MONGO_DATABASE][config.STOCK_COLLECTION]
    from shop_common.server import serve

    serve(InventoryApp(StockStore(collection)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
