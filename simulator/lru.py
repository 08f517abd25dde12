"""A bounded memo that forgets the least recently used entry first: the one every cache uses."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar, overload

K = TypeVar("K")
V = TypeVar("V")
D = TypeVar("D")


class Lru(Generic[K, V]):
    """At most `limit` entries; a `put` past it drops the least recently used one.

    Each operation is atomic (threads share the simulator's memos); a read-then-build needs
    the caller's own lock only where two threads must end up with the same object.
    """

    __slots__ = ("_entries", "_lock", "limit")

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"an Lru keeps at least 1 entry, got limit={limit}")
        self.limit = limit
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    @overload
    def get(self, key: K) -> V | None: ...
    @overload
    def get(self, key: K, default: D) -> V | D: ...
    def get(self, key: K, default: object = None) -> object:
        """The value of `key`, now the most recently used; `default` when it is not kept."""
        with self._lock:
            try:
                self._entries.move_to_end(key)
            except KeyError:
                return default
            return self._entries[key]

    def peek(self, key: K) -> V | None:
        """The value of `key` (None when it is not kept), its age left as it was."""
        with self._lock:
            return self._entries.get(key)

    def put(self, key: K, value: V) -> None:
        """Keep `value` for `key` as the most recently used; drop the oldest past the limit."""
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.limit:
                self._entries.popitem(last=False)

    def setdefault(self, key: K, value: V) -> V:
        """The value kept for `key`, or `value`, kept now (the first of two racing builds wins)."""
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                return found
            self._entries[key] = value
            while len(self._entries) > self.limit:
                self._entries.popitem(last=False)
            return value

    def pop(self, key: K) -> V | None:
        """Forget `key`; its value, or None when it was not kept."""
        with self._lock:
            return self._entries.pop(key, None)

    def clear(self) -> None:
        """Forget everything."""
        with self._lock:
            self._entries.clear()

    def keys(self) -> list[K]:
        """The keys kept, least recently used first."""
        with self._lock:
            return list(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries


__all__ = ["Lru"]
