"""What a team seat plays through: a caller that also waits for teammates, and its threads."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from ..base import ToolCaller

WAIT_SECONDS = 60.0
"""How long a role waits for a teammate's message before giving up."""


Look = tuple[str, dict[str, Any]]


class TeamCaller(ToolCaller, Protocol):
    """A ToolCaller that can also wait for teammates' messages."""

    def wait_message(
        self,
        predicate: Callable[[Mapping[str, Any]], bool],
        timeout: float,
        filler: Callable[[], Look | None] | None = None,
    ) -> Mapping[str, Any] | None:
        """The first teammate message matching `predicate`, or None after `timeout` seconds.

        Turns the seat holds meanwhile (ROUND_ROBIN, SIMULTANEOUS) go to `filler`'s looks.
        """
        ...


def looks(items: list[Look]) -> Callable[[], Look | None]:
    """A filler that takes `items` in order, then nothing."""
    queue = list(items)
    return lambda: queue.pop(0) if queue else None


class RoleCaller(TeamCaller, Protocol):
    """A TeamCaller that also shows the seat's dashboard and whole inbox."""

    @property
    def observation(self) -> Mapping[str, Any]:
        """The latest observation the seat received (cut to its view by the server)."""
        ...

    @property
    def over(self) -> bool:
        """Whether the episode or the seat's stream has ended."""
        ...

    def inbox(self) -> Sequence[Mapping[str, Any]]:
        """Teammates' messages received so far, in the order the session applied them."""
        ...

    def wait_inbox(
        self, count: int, timeout: float, filler: Callable[[], Look | None] | None = None
    ) -> bool:
        """Wait until more than `count` messages arrived; False on timeout or the episode's end.

        Turns the seat holds meanwhile go to `filler`'s looks, as in `wait_message`.
        """
        ...


def on_threads(names: Sequence[str], play: Callable[[str], None]) -> None:
    """Run `play(name)` for each seat on a thread of its own; raise the first error once all end.

    The seats of a team act at once, as people would: under FREE_FOR_ALL their calls
    interleave, under the turn policies each call waits for its seat's turn.
    """
    errors: list[BaseException] = []

    def run(name: str) -> None:
        try:
            play(name)
        except BaseException as exc:  # surfaced to the caller below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(n,), name=f"team-{n}") for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


__all__ = ["WAIT_SECONDS", "Look", "RoleCaller", "TeamCaller", "looks", "on_threads"]
