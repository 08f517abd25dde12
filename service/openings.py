"""What the service derives from an episode's opening observation, made once per scenario and seed.

Every episode of a scenario and seed opens on the same observation (the simulator keeps it on
the rendered instance), and each new session stores it and sends it, twice when its agent joins
before the first call. Its derived forms (its stored record, its wire bytes) are made once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

from metasre.simulator import Observation

V = TypeVar("V")


class OpeningForms(Generic[V]):
    """`make(opening)` of the `size` most recently used (scenario id, seed) pairs.

    Keyed by value, not by the object: an opening read back from the store finds its entry,
    and an observation that is not the kept opening of its scenario and seed (a caller's
    mistake) is made afresh, not answered with another's form.
    """

    def __init__(self, size: int, make: Callable[[Observation], V]) -> None:
        self.size = size
        self._make = make
        self._entries: OrderedDict[tuple[str, int], tuple[Observation, V]] = OrderedDict()
        self._lock = threading.Lock()  # the store's writer thread and the event loop share it

    def get(self, seed: int, opening: Observation) -> V:
        """The form of `opening`, the observation before the first call of episodes of `seed`."""
        key = (opening.scenario_id, seed)
        with self._lock:
            found = self._entries.get(key)
            if found is not None and found[0] == opening:
                self._entries.move_to_end(key)
                return found[1]
        value = self._make(opening)
        with self._lock:
            self._entries[key] = (opening, value)
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return value

    def kept(self) -> list[tuple[str, int]]:
        """The (scenario id, seed) pairs kept, least recently used first."""
        with self._lock:
            return list(self._entries)
