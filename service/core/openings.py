"""What the service derives from an observation, made once for all who need it.

Every episode of a scenario and seed opens on the same observation (the simulator keeps it on
the rendered instance), and each new session stores it and sends it, twice when its agent joins
before the first call. Its derived forms (its stored record, its wire bytes) are made once.
Every applied call's observation is rendered as text twice (its stored record, its caller's
result): `observation_text` renders it once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from ...simulator import Observation
from ...simulator.lru import Lru

V = TypeVar("V")

RENDERED_KEPT = 64
"""Observations whose text is kept. Between an applied call's stored record and its caller's
result (after the commit) other sessions' calls are applied: with one slot, 16 sessions of 3
seats rendered every observation twice (2,532 renders for 1,266 calls under cProfile)."""

# By identity (no hashing): id -> (the observation, kept alive so its id is not reused, text).
# An Lru: the store's writer thread may read it too.
_rendered: Lru[int, tuple[Observation, str]] = Lru(RENDERED_KEPT)


def observation_text(obs: Observation) -> str:
    """`obs.render()`, kept for the observations rendered last (see `RENDERED_KEPT`).

    An applied call's observation is rendered for its stored record, then for its caller's
    result, moments apart; both get the text made once.
    """
    found = _rendered.peek(id(obs))
    if found is not None and found[0] is obs:
        return found[1]
    text = obs.render()
    _rendered.put(id(obs), (obs, text))
    return text


class OpeningForms(Generic[V]):
    """`make(opening)` of the `size` most recently used openings, kept by their value.

    By value, not by the object: the opening of a scenario and seed is one value however many
    copies of it there are (an opening read back from the store finds its entry), and hashing
    it costs about 2 us against the 100 us and more of making its forms.
    """

    def __init__(self, size: int, make: Callable[[Observation], V]) -> None:
        self.size = size
        self._make = make
        # the store's writer thread and the event loop share it: an Lru is thread-safe
        self._entries: Lru[Observation, V] = Lru(size)

    def get(self, opening: Observation) -> V:
        """The form of `opening`, made now if it is not kept."""
        found = self._entries.get(opening)
        if found is not None:
            return found
        value = self._make(opening)
        self._entries.put(opening, value)
        return value

    def kept(self) -> list[Observation]:
        """The openings kept, least recently used first."""
        return self._entries.keys()
