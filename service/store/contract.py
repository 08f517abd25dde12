"""What every trajectory store offers: its rows, its statements, and the `Store` protocol.

Two stores keep the same contract: the embedded SQLite file (`metasre.service.store.sqlite`,
the default) and PostgreSQL for a fleet (`metasre.service.store.postgres`). Whatever records,
recovers or exports sessions holds a `Store` and never asks which one it is: each store makes
its own statements (`session_op` and the rest), in its own SQL dialect.

The contract: `write` returns only once its statements are committed and durable (an applied
call is acknowledged only after that); the statements of concurrent writes share transactions
(group commit) but one bad write fails alone; `problem` says why nothing can be recorded now.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Protocol

Op = tuple[str, tuple[Any, ...]]
"""One statement and its parameters, in the dialect of the store that made it."""


@dataclass(frozen=True, slots=True)
class SessionRow:
    """A stored session."""

    session_id: str
    scenario_id: str
    seed: int
    config: Mapping[str, Any]
    """Everything needed to rebuild the session: seats, turn policy, attribution, limits."""
    created_at: float
    closed_at: float | None


@dataclass(frozen=True, slots=True)
class EventRow:
    """A stored log entry."""

    session_id: str
    sequence: int
    episode: int
    tick: int
    kind: str
    agent_id: str
    payload: Mapping[str, Any]


class Store(Protocol):
    """A trajectory store: sessions and every logged event, written durably in group commits."""

    on_problem: Callable[[str | None], None] | None
    """Called (from the writer thread, or whoever noticed) when `problem` changes."""
    commits: int
    """Transactions committed so far (a group commit is one)."""

    @property
    def where(self) -> str:
        """The store for people and logs: a file's path, or a URL without its password."""
        ...

    @property
    def problem(self) -> str | None:
        """Why the store cannot record anything now; None when it can (as far as is known)."""
        ...

    @property
    def lost(self) -> bool:
        """Whether the store is gone for good (only a restart on a sound store helps)."""
        ...

    def check(self) -> str | None:
        """Look at the store now (blocking); `problem` afterwards."""
        ...

    async def probe(self) -> str | None:
        """Try a small write, to learn whether the store can write again; `problem` after."""
        ...

    def submit(self, ops: Sequence[Op]) -> Future[None]:
        """Queue statements to run in one transaction; the future resolves once committed."""
        ...

    async def write(self, ops: Sequence[Op]) -> None:
        """Run statements in one transaction and wait until they are committed and durable."""
        ...

    def session_op(self, row: SessionRow) -> Op:
        """The statement that stores a new session."""
        ...

    def event_op(self, row: EventRow) -> Op:
        """The statement that stores one log entry."""
        ...

    def close_op(self, session_id: str, at: float | None = None) -> Op:
        """The statement that marks a session closed (now, or `at`)."""
        ...

    def request_op(self, request_key: str, session_id: str, fingerprint: str) -> Op:
        """The statement that stores which session a CreateSession request id made."""
        ...

    def close(self) -> None:
        """Flush what is queued, stop the writer and let go of the store; idempotent."""
        ...

    def sessions(self, *, open_only: bool = False) -> list[SessionRow]:
        """Stored sessions, oldest first."""
        ...

    def session(self, session_id: str) -> SessionRow | None:
        """One stored session, open or closed, or None."""
        ...

    def events(
        self, session_id: str, *, after_sequence: int = 0, through: int | None = None
    ) -> list[EventRow]:
        """A session's stored events in sequence order, after `after_sequence` to `through`."""
        ...

    def first_sequence(self, session_id: str, episode: int, tick: int) -> int | None:
        """The sequence of the session's first stored event at or after (episode, tick)."""
        ...

    def request(self, request_key: str) -> tuple[str, str] | None:
        """(session id, fingerprint) of the session a CreateSession request id made, or None."""
        ...

    def count_events(self) -> int:
        """How many events are stored, over all sessions."""
        ...


class StoreHold(Protocol):
    """A server's claim on a store (one server per store), held until `release`."""

    @property
    def held(self) -> bool:
        """Whether the claim is still held."""
        ...

    def release(self) -> None:
        """Let the next server have the store; idempotent."""
        ...
