"""The server's settings: address, limits, TLS, the admin token and the trajectory store."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .core.shards import Shard

STORE_URL_SCHEMES = ("postgresql://", "postgres://")
"""How a `--store` that names a PostgreSQL database begins (libpq's URI schemes)."""


def is_store_url(where: str | Path) -> bool:
    """Whether `where` names a PostgreSQL database (else it is a SQLite file's path)."""
    return isinstance(where, str) and where.startswith(STORE_URL_SCHEMES)


@dataclass(frozen=True, slots=True)
class Limits:
    """What one server accepts before it refuses with RESOURCE_EXHAUSTED or ends idle work."""

    max_sessions: int = 256
    """Sessions open at once."""
    max_sessions_per_owner: int = 64
    """Sessions one owner token may hold open at once (sessions being made count too), so that
    one owner cannot fill the server and lock every other owner out; at most `max_sessions`
    takes effect. A server that serves one owner (the in-process server of `metasre rollout`)
    sets it to `max_sessions`."""
    max_agents_per_session: int = 16
    """Seats per session."""
    max_message_bytes: int = 4 * 1024 * 1024
    """Largest message received or sent, in bytes."""
    idle_session_seconds: float = 3600.0
    """Seconds without a call or a connected agent before a session is closed."""
    ended_session_seconds: float = 60.0
    """Seconds a session is kept once its episode has ended and no seat is held (nor kept for
    a resume), before it is closed and its slot freed: time enough to read the grade or reset;
    its trajectory stays readable from the store."""
    idle_seat_seconds: float = 900.0
    """Seconds without a message from an agent before its Connect stream is ended."""
    turn_timeout_seconds: float = 30.0
    """Default seconds an agent may hold the turn, or a simultaneous round may wait."""
    seat_grace_seconds: float = 60.0
    """Seconds a seat whose stream dropped (not closed) stays its agent's, for a resume; 0: none."""
    stream_buffer_messages: int = 256
    """Messages a Connect stream holds for a reader that is not keeping up; past it, the stream
    stops reading the session's log (which holds every event anyway) until the reader catches
    up, so a slow reader costs no memory of its own."""
    stream_buffer_bytes: int = 4 * 1024 * 1024
    """Bytes of prebuilt messages (results, teammates' applied calls) a Connect stream holds
    for a reader that is not keeping up, whichever of this and `stream_buffer_messages` comes
    first: a few large reads fill it long before 256 messages would."""
    slow_reader_seconds: float = 60.0
    """Seconds a Connect stream's buffer may stay full before the stream is cut off
    (RESOURCE_EXHAUSTED, reason SLOW_READER); the seat stays its agent's for a resume."""

    def __post_init__(self) -> None:
        if self.seat_grace_seconds < 0:
            raise ValueError(f"seat_grace_seconds must be >= 0, got {self.seat_grace_seconds}")
        for name in (
            "max_sessions",
            "max_sessions_per_owner",
            "max_agents_per_session",
            "max_message_bytes",
            "idle_session_seconds",
            "ended_session_seconds",
            "idle_seat_seconds",
            "turn_timeout_seconds",
            "stream_buffer_messages",
            "stream_buffer_bytes",
            "slow_reader_seconds",
        ):
            if getattr(self, name) <= 0:
                raise ValueError(f"limit {name} must be positive, got {getattr(self, name)}")


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Everything `build_server` needs."""

    host: str = "127.0.0.1"
    """Address to listen on."""
    port: int = 50051
    """Port to listen on; 0 picks a free one (see `MetasreServer.port`)."""
    limits: Limits = field(default_factory=Limits)
    """Server-wide limits."""
    tls_cert: Path | None = None
    """PEM certificate chain; with `tls_key`, the server speaks TLS only."""
    tls_key: Path | None = None
    """PEM private key of `tls_cert`."""
    admin_token: str | None = None
    """When set, control and watch calls need the metadata `authorization: Bearer <token>`."""
    grace_seconds: float = 5.0
    """On shutdown, how long in-flight calls may take to finish."""
    store_path: Path | None = None
    """The SQLite trajectory store every session and call is recorded in (created if missing);
    None records nothing. `metasre serve` defaults to `metasre.db` in the working directory."""
    store_url: str | None = None
    """Instead of `store_path`: a PostgreSQL database to record in (`postgresql://...`; its
    tables are made or brought up to date), which several machines can reach. Needs the
    `postgres` extra."""
    handover: bool = False
    """On shutdown, leave open sessions open in the store, for the next server on the same store
    to rebuild (agents resume their seats there), instead of closing them. Needs a store."""
    store_wait_seconds: float = 0.0
    """How long to wait for another server to let go of the store (its lock; see
    `metasre.service.store.lock`) before giving up: 0 gives up at once. A server taking over
    from one that hands over (`metasre serve --handover`) waits while the old one drains."""
    shard: Shard | None = None
    """This server's slot in a fleet (`metasre serve --workers N`): its session ids name the
    slot, it recovers only its slot's sessions from a shared store, and it refuses a session of
    another slot with NOT_FOUND / SESSION_ON_OTHER_SHARD naming the holder. None: a lone server."""
    manage_gc: bool = False
    """Keep garbage-collector pauses short by freezing the long-lived heap (process-wide; see
    `metasre.service.gc_freeze`): for a server that owns its process, as `metasre serve` does."""

    @property
    def store(self) -> Path | str | None:
        """The store sessions are recorded in: `store_path` or `store_url` (None: none)."""
        return self.store_path if self.store_path is not None else self.store_url

    def __post_init__(self) -> None:
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ValueError("TLS needs both a certificate and a key; give both or neither")
        if self.store_path is not None and self.store_url is not None:
            raise ValueError("give one trajectory store: a SQLite path or a PostgreSQL URL")
        if self.store_url is not None and not is_store_url(self.store_url):
            raise ValueError(
                "store_url must begin postgresql:// or postgres://, got "
                f"{self.store_url.partition('://')[0] or self.store_url[:20]!r}"
            )
        if self.handover and self.store is None:
            raise ValueError(
                "handover leaves sessions in the trajectory store for the next server: "
                "it needs a store"
            )
        if not 0 <= self.store_wait_seconds <= 3600:
            raise ValueError(
                f"store_wait_seconds must be in [0, 3600], got {self.store_wait_seconds}"
            )
        if not 0 <= self.port <= 65535:
            raise ValueError(f"port must be in 0-65535, got {self.port}")
