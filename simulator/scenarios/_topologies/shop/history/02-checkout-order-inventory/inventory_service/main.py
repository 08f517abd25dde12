"""inventory-service entry point: wait for a mongo-db primary, then serve.

Kubernetes runs ``python -m inventory_service.main``. Without a primary the process exits 1
after STARTUP_PRIMARY_WAIT_S and the pod is restarted with back-off.
"""

from __future__ import annotations

import logging
import sys

from inventory_service import config
from inventory_service.handlers import InventoryApp
from inventory_service.store import StockStore

log = logging.getLogger("inventory-service")


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    import pymongo  # the driver is only in the container image

    client = pymongo.MongoClient(config.MONGO_URI,
                                 serverSelectionTimeoutMS=config.STARTUP_PRIMARY_WAIT_S * 1000)
    try:
        client.admin.command("ping")
    except pymongo.errors.ServerSelectionTimeoutError as exc:
        log.critical("no mongo-db primary after %ds: %s; exiting", config.STARTUP_PRIMARY_WAIT_S, exc)
        return 1
    collection = client[config.MONGO_DATABASE][config.STOCK_COLLECTION]
    from shop_common.server import serve

    serve(InventoryApp(StockStore(collection)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
