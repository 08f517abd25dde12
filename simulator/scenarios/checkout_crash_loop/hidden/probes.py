"""Grader probes for checkout-crash-loop (never shown to agents): all PASS_TO_PASS (the fix
is operational: a restart of the stuck pods, or a rollback of a release that cannot start).

Each probe calls the services' code on fixed inputs and returns what it observed as plain
data; it decides nothing. The grader runs the same probes on the reference solution's code and
compares the observations there, so the expected values are written nowhere in this file.

What they look at: whether both services refuse to serve without a mongo-db primary and serve
once they find it, whether a service that caches the primary drops a stale hint and
re-discovers the replica set (not asked of one whose stale hint is this seed's incident), checkout's time budget for order-service, and whether the order path reserves
stock."""

import importlib
import sys
import types

import shop_common.server
from checkout_service import CheckoutApp
from checkout_service import config as checkout_config
from inventory_service import InMemoryCollection, InventoryApp, StockStore
from order_service import InMemoryOrderStore, OrderApp
from shop_common import InProcessTransport, Request

PRIMARY = "mongo-db-{{members.primary}}.mongo-db:27017"
STALE = "mongo-db-{{members.stale}}.mongo-db:27017"


class _Timeout(Exception):
    pass


def _fake_pymongo(hello_for, uris):
    """A pymongo whose `hello` answer depends on the URI: hello_for(uri) -> dict, or None."""
    module = types.ModuleType("pymongo")
    module.errors = types.SimpleNamespace(ServerSelectionTimeoutError=_Timeout)

    class _Admin:
        def __init__(self, uri):
            self.uri = uri

        def command(self, name):
            hello = hello_for(self.uri)
            if hello is None:
                raise _Timeout("No replica set members found yet")
            return hello

    class _Database:
        def __getitem__(self, name):
            return InMemoryCollection([])

    class MongoClient:
        def __init__(self, uri, **kwargs):
            uris.append(uri)
            self.admin = _Admin(uri)

        def __getitem__(self, name):
            return _Database()

    module.MongoClient = MongoClient
    return module


def _run_main(package, hello_for, hint=None):
    """Run `package`.main.main() against a fake driver; the hint file is `hint`, in memory."""
    main_module = importlib.import_module(f"{package}.main")
    served, written, forgotten, uris = [], [], [], []
    saved_pymongo = sys.modules.get("pymongo")
    saved_serve = shop_common.server.serve
    names = ("_read_hint", "_write_hint", "_forget_hint")
    saved = {n: getattr(main_module, n) for n in names if hasattr(main_module, n)}
    sys.modules["pymongo"] = _fake_pymongo(hello_for, uris)
    shop_common.server.serve = lambda app, port=8080: served.append(app)
    main_module._read_hint = lambda: None if forgotten else hint
    main_module._write_hint = written.append
    main_module._forget_hint = lambda: forgotten.append(True)
    try:
        code = main_module.main()
    finally:
        if saved_pymongo is None:
            sys.modules.pop("pymongo", None)
        else:
            sys.modules["pymongo"] = saved_pymongo
        shop_common.server.serve = saved_serve
        for n in names:
            if n in saved:
                setattr(main_module, n, saved[n])
            elif hasattr(main_module, n):
                delattr(main_module, n)
    return code, served, written, uris


def _no_primary(uri):
    return None


def _primary(uri):
    return {"isWritablePrimary": True, "me": PRIMARY}


def _after_election(uri):
    """The cached member answers directly but was demoted; discovery finds the new primary."""
    if "directConnection=true" in uri:
        return {"isWritablePrimary": False, "secondary": True, "me": STALE}
    return _primary(uri)


def _started(code, served, written):
    return {"exit_code": code, "served": len(served), "hints_written": list(written)}


def inventory_refuses_to_serve_without_a_primary():
    code, served, written, _ = _run_main("inventory_service", _no_primary)
    return _started(code, served, written)


def inventory_serves_once_it_finds_the_primary():
    code, served, written, _ = _run_main("inventory_service", _primary)
    return _started(code, served, written)


def orders_refuse_to_serve_without_a_primary():
    code, served, written, _ = _run_main("order_service", _no_primary)
    return _started(code, served, written)


def orders_serve_once_they_find_the_primary():
    code, served, written, _ = _run_main("order_service", _primary)
    return _started(code, served, written)


def _rediscovers(package):
    code, served, written, _ = _run_main(package, _after_election, hint=STALE)
    return {"exit_code": code, "served": len(served), "last_hint_written": list(written[-1:])}


def inventory_rediscovers_the_primary_after_an_election():
    return _rediscovers("inventory_service")


def orders_rediscover_the_primary_after_an_election():
    return _rediscovers("order_service")


def checkout_gives_up_within_its_budget():
    budget = (1 + checkout_config.ORDER_RETRIES) * checkout_config.ORDER_TIMEOUT_S
    return {"budget_s": round(budget, 6)}


def order_reserves_stock_through_inventory():
    stock = StockStore(InMemoryCollection([{"sku": "sku-{{primary}}", "available": 2, "reserved": 0}]))
    transport = InProcessTransport({"inventory-service": InventoryApp(stock)})
    transport.register("order-service", OrderApp(InMemoryOrderStore(), transport))
    transport.register("checkout-service", CheckoutApp(transport))
    answer = transport.send("checkout-service", Request(
        "POST", "/v1/checkout", {"items": [{"sku": "sku-{{primary}}", "qty": 2}]},
        {"X-User-Id": "u-1"}))
    return {"status": answer.status, "available_after": stock.available("sku-{{primary}}")}
