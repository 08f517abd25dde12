"""Grader checks for checkout-crash-loop: all PASS_TO_PASS (the fix is a restart of
inventory-service's pods). Startup must still refuse to serve without a primary, checkout must
still give up within its budget, and the order path must still reserve stock."""

import sys
import types

import shop_common.server
from checkout_service import CheckoutApp
from checkout_service import config as checkout_config
from inventory_service import InMemoryCollection, InventoryApp, StockStore
from inventory_service import config as inventory_config
from order_service import InMemoryOrderStore, OrderApp
from shop_common import InProcessTransport, Request


class _Timeout(Exception):
    pass


def _fake_pymongo(hello):
    module = types.ModuleType("pymongo")
    module.errors = types.SimpleNamespace(ServerSelectionTimeoutError=_Timeout)

    class _Admin:
        def command(self, name):
            if hello is None:
                raise _Timeout("No replica set members found yet")
            return hello

    class MongoClient:
        def __init__(self, uri, **kwargs):
            self.admin = _Admin()

        def __getitem__(self, name):
            return {"stock": InMemoryCollection([])}

    module.MongoClient = MongoClient
    return module


def _run_main(hello):
    import inventory_service.main as inventory_main
    served = []
    saved = (sys.modules.get("pymongo"), shop_common.server.serve, inventory_config.PRIMARY_HINT_FILE
             if hasattr(inventory_config, "PRIMARY_HINT_FILE") else None)
    sys.modules["pymongo"] = _fake_pymongo(hello)
    shop_common.server.serve = lambda app, port=8080: served.append(app)
    inventory_config.PRIMARY_HINT_FILE = ""
    try:
        code = inventory_main.main()
    finally:
        if saved[0] is None:
            sys.modules.pop("pymongo", None)
        else:
            sys.modules["pymongo"] = saved[0]
        shop_common.server.serve = saved[1]
        inventory_config.PRIMARY_HINT_FILE = saved[2]
    return code, served


def test_inventory_refuses_to_serve_without_a_primary():
    code, served = _run_main(None)
    assert code != 0 and not served, f"no primary must exit non-zero, got {code!r}"


def test_inventory_serves_once_it_finds_the_primary():
    code, served = _run_main({"isWritablePrimary": True, "me": "mongo-db-{{primary}}.mongo-db:27017"})
    assert code == 0 and len(served) == 1, (code, served)


def test_checkout_gives_up_within_its_budget():
    budget = (1 + checkout_config.ORDER_RETRIES) * checkout_config.ORDER_TIMEOUT_S
    assert budget <= 12.0, f"checkout may wait {budget} s for order-service"


def test_order_reserves_stock_through_inventory():
    stock = StockStore(InMemoryCollection([{"sku": "sku-{{primary}}", "available": 2, "reserved": 0}]))
    transport = InProcessTransport({"inventory-service": InventoryApp(stock)})
    transport.register("order-service", OrderApp(InMemoryOrderStore(), transport))
    transport.register("checkout-service", CheckoutApp(transport))
    answer = transport.send("checkout-service", Request(
        "POST", "/v1/checkout", {"items": [{"sku": "sku-{{primary}}", "qty": 2}]},
        {"X-User-Id": "u-1"}))
    assert answer.status == 201, answer
    assert stock.available("sku-{{primary}}") == 0
