"""payment-service entry point: connect, migrate, then serve.

Kubernetes runs ``python -m payment_service.main``. If a migration fails the process exits 1
before serving, and Kubernetes restarts the pod with back-off (CrashLoopBackOff).
"""

from __future__ import annotations

import logging
import sys

from payment_service import config
from payment_service.db import Database
from payment_service.handlers import PaymentApp
from payment_service.migrate import MigrationError, apply_pending
from payment_service.provider import HttpCardProvider
from payment_service.store import PostgresPaymentStore

log = logging.getLogger("payment-service")


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    db = Database.connect(config.DATABASE_URL)
    if config.RUN_MIGRATIONS_ON_START:
        try:
            applied = apply_pending(db)
        except MigrationError as exc:
            log.critical("%s; refusing to start", exc, exc_info=True)
            return 1
        log.info("schema up to date (%d migrations applied now)", len(applied))
    from shop_common.server import serve

    serve(PaymentApp(PostgresPaymentStore(db), HttpCardProvider()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
