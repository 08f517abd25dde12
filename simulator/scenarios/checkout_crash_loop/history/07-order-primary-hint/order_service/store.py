"""Orders in MongoDB (``orders.orders``): one document per order."""

from __future__ import annotations

import uuid


class MongoOrderStore:
    """The production OrderStore over a pymongo collection."""

    def __init__(self, collection) -> None:
        self._orders = collection

    def next_id(self) -> str:
        return f"ord-{uuid.uuid4().hex[:12]}"

    def save(self, order: dict) -> None:
        self._orders.insert_one(dict(order))

    def get(self, order_id: str) -> dict | None:
        document = self._orders.find_one({"order_id": order_id})
        if document is None:
            return None
        document = dict(document)
        document.pop("_id", None)
        return document
