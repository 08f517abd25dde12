"""Stock levels in MongoDB (``inventory.stock``): one document per SKU.

A reservation is one atomic ``find_one_and_update`` guarded by ``available >= qty``, so two
checkouts can never both take the last unit.
"""

from __future__ import annotations

from typing import Protocol


class Collection(Protocol):
    """The subset of a pymongo collection the store uses."""

    def find_one(self, filter: dict) -> dict | None: ...

    def find_one_and_update(self, filter: dict, update: dict) -> dict | None: ...

    def insert_one(self, document: dict) -> None: ...


class InMemoryCollection:
    """A Collection in a list, for tests and local dev.

    Supports equality and ``$gte`` filters and ``$inc`` / ``$set`` updates: what the store needs.
    """

    def __init__(self, documents: list[dict] | None = None) -> None:
        self.documents = [dict(d) for d in documents or []]

    def find_one(self, filter: dict) -> dict | None:
        for document in self.documents:
            if _matches(document, filter):
                return dict(document)
        return None

    def find_one_and_update(self, filter: dict, update: dict) -> dict | None:
        for document in self.documents:
            if _matches(document, filter):
                for field, delta in update.get("$inc", {}).items():
                    document[field] = document.get(field, 0) + delta
                document.update(update.get("$set", {}))
                return dict(document)
        return None

    def insert_one(self, document: dict) -> None:
        self.documents.append(dict(document))


def _matches(document: dict, filter: dict) -> bool:
    for field, condition in filter.items():
        value = document.get(field)
        if isinstance(condition, dict):
            if "$gte" in condition and not (value is not None and value >= condition["$gte"]):
                return False
        elif value != condition:
            return False
    return True


class StockStore:
    """Stock operations over the ``stock`` collection."""

    def __init__(self, collection: Collection) -> None:
        self._stock = collection

    def available(self, sku: str) -> int | None:
        """Units available for `sku`, or None for an unknown SKU."""
        document = self._stock.find_one({"sku": sku})
        return None if document is None else int(document["available"])

    def reserve(self, sku: str, qty: int) -> bool:
        """Take `qty` units of `sku` if that many are available; False otherwise."""
        updated = self._stock.find_one_and_update(
            {"sku": sku, "available": {"$gte": qty}},
            {"$inc": {"available": -qty, "reserved": qty}},
        )
        return updated is not None

    def release(self, sku: str, qty: int) -> None:
        """Give back `qty` units of `sku` taken by a reservation."""
        self._stock.find_one_and_update({"sku": sku}, {"$inc": {"available": qty, "reserved": -qty}})

    def restock(self, sku: str, qty: int) -> None:
        """Add `qty` units of `sku`, creating the SKU if it is new."""
        if self._stock.find_one_and_update({"sku": sku}, {"$inc": {"available": qty}}) is None:
            self._stock.insert_one({"sku": sku, "available": qty, "reserved": 0})
