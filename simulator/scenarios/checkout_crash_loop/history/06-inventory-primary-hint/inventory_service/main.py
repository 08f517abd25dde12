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
{{stuck.inv_connect}}

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
