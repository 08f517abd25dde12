"""What was made from an object, kept by the object's identity.

For immutable objects many sessions share (an episode's opening observation), whose derived
forms are then built once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class ByIdentity(Generic[K, V]):
    """At most `size` values, each kept with its object; the oldest goes first.

    The object is held with its value, so its id is not reused while the entry is kept, and an
    equal but distinct object is a miss: by identity, not by value (two equal observations may
    still differ in their bytes: -0.0 and 0.0, 1 and 1.0).
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: dict[int, tuple[K, V]] = {}

    def get(self, key: K, make: Callable[[K], V]) -> V:
        """The value made from `key`, made now by `make(key)` if it is not kept."""
        found = self._entries.get(id(key))
        if found is not None and found[0] is key:
            return found[1]
        value = make(key)
        self._entries[id(key)] = (key, value)
        while len(self._entries) > self.size:
            del self._entries[next(iter(self._entries))]
        return value

    def kept(self) -> list[K]:
        """The objects kept, oldest first."""
        return [key for key, _ in self._entries.values()]
