"""The trajectory store on PostgreSQL: one database that a fleet of servers can share.

It keeps the contract of `metasre.service.store.contract`, as the SQLite store does. Writes go
through one writer thread and one connection that commits whatever has queued up in a single
transaction (group commit), its statements sent in one pipeline (one round trip, not one a
statement); a write's future resolves only once PostgreSQL has committed it. The writer's
connection runs with `synchronous_commit` at least `on` (an `off` set on the server is raised
for it), so a commit returns only once its WAL is flushed: an acknowledged call is durable.
Reads use a few connections of their own and never wait for the writer.

A lost connection or a refusing server (shut down, disk full, out of connections) is a passing
problem: that batch fails (nothing of it is acknowledged), `problem` says why, and the next
write (or `probe`) connects again. The store is never `lost` for good: there are no files of its
own to lose, and a database restored elsewhere is a matter for its operator.

The schema carries a version (`metasre.service.store.postgres_schema`): opening a store brings
an older one up to date, and refuses one made by a newer metasre.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from typing import Any

import psycopg
from psycopg import conninfo

from ..core.errors import StoreError
from .contract import EventRow, Op, SessionRow
from .lock import POLL_SECONDS, StoreInUseError
from .postgres_schema import (
    LOCK_CLASS,
    MIGRATIONS,
    SERVING,
    SHARD_SERVING,
    migrate,
)
from .sqlite import _dumps, _Waiter, _wake_waiters

CONNECT_SECONDS = 10
"""How long one connection attempt may take before the store reports it cannot write."""

_STOP = object()


def redact(url: str) -> str:
    """`url` without its password (and other secrets), for logs, messages and GetServerInfo."""
    try:
        parts = conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "postgresql://(a URL libpq cannot parse)"
    user = f"{parts['user']}@" if parts.get("user") else ""
    host = str(parts.get("host") or "")
    port = f":{parts['port']}" if parts.get("port") else ""
    dbname = parts.get("dbname") or ""
    if host.startswith("/"):  # a Unix socket's folder
        return f"postgresql://{user}/{dbname}?host={host}"
    return f"postgresql://{user}{host}{port}/{dbname}"


def connect(url: str, *, autocommit: bool = False) -> psycopg.Connection[Any]:
    """A connection to the store at `url`, named for `pg_stat_activity`.

    Raises:
        StoreError: PostgreSQL cannot be reached, or refuses the connection.
    """
    name = f"metasre pid {os.getpid()} on {socket.gethostname()}"[:63]
    try:
        return psycopg.connect(
            url,
            autocommit=autocommit,
            connect_timeout=CONNECT_SECONDS,
            application_name=name,
        )
    except psycopg.Error as exc:
        raise StoreError(
            f"cannot connect to the store at {redact(url)}: {_first_line(exc)}"
        ) from exc


class PostgresStore:
    """Every session and event in one PostgreSQL database; see the module docstring.

    Args:
        url: A libpq URL (`postgresql://user:password@host:port/dbname?sslmode=...`).
        create: Make the schema in a database that has none (False: refuse such a database,
            as `metasre export` does: there is nothing to read in it).
        max_batch: The most writes one transaction commits.
        on_problem: Called when `problem` changes.

    Raises:
        StoreError: the database cannot be reached, holds no store (with `create` False), or
            holds a schema newer than this metasre knows.
    """

    def __init__(
        self,
        url: str,
        *,
        create: bool = True,
        max_batch: int = 512,
        on_problem: Callable[[str | None], None] | None = None,
    ) -> None:
        self._url = url
        self._where = redact(url)
        self._max_batch = max_batch
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._closed = False
        self._unwritable: str | None = None
        """Why the last write failed on a connection or server error, until one succeeds."""
        self.on_problem = on_problem
        self.commits = 0
        self._readers: list[psycopg.Connection[Any]] = []
        self._readers_lock = threading.Lock()
        conn = connect(url)
        try:
            migrate(conn, MIGRATIONS, where=self._where, create=create)
        finally:
            conn.close()
        self._writer = threading.Thread(target=self._write_loop, name="store-writer", daemon=True)
        self._writer.start()

    # -- health -------------------------------------------------------------------------------

    @property
    def where(self) -> str:
        """The store's URL without its password."""
        return self._where

    @property
    def problem(self) -> str | None:
        """Why the store cannot record anything now; None when it can (as far as is known)."""
        return self._unwritable

    @property
    def lost(self) -> bool:
        """Never: a database that cannot be reached is a passing problem (see the module)."""
        return False

    def check(self) -> str | None:
        """Ask the database whether it answers (blocking); `problem` afterwards.

        Writes notice an unreachable database themselves; this notices it while nothing is
        written. Only a write that succeeds (`probe`) clears the problem.
        """
        if not self._closed:
            try:
                self._read("SELECT 1", ())
            except StoreError as exc:
                self._set_unwritable(f"the store at {self._where} cannot be reached: {exc}")
        return self.problem

    async def probe(self) -> str | None:
        """Try a small write, to learn whether the store can write again; `problem` afterwards."""
        with contextlib.suppress(StoreError):
            await self.write(
                [
                    (
                        "INSERT INTO probes VALUES (1, %s) ON CONFLICT (id)"
                        " DO UPDATE SET checked_at = EXCLUDED.checked_at",
                        (time.time(),),
                    )
                ]
            )
        return self.problem

    def _set_unwritable(self, why: str | None) -> None:
        if why != self._unwritable:
            self._unwritable = why
            if self.on_problem is not None:
                self.on_problem(why)

    # -- writing ------------------------------------------------------------------------------

    def submit(self, ops: Sequence[Op]) -> Future[None]:
        """Queue statements to run in one transaction; the future resolves once committed."""
        return self._submit(ops, None)

    async def write(self, ops: Sequence[Op]) -> None:
        """Run statements in one transaction and wait until they are committed.

        Raises:
            StoreError: the transaction could not be committed; nothing of it is stored.
        """
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        done = self._submit(ops, (loop, waiter))
        try:
            await waiter
        except asyncio.CancelledError:
            done.cancel()  # dropped with its statements unless the writer has begun them
            raise

    def _submit(self, ops: Sequence[Op], waiter: _Waiter | None) -> Future[None]:
        if self._closed:
            raise StoreError(f"the store at {self._where} is closed")
        done: Future[None] = Future()
        self._queue.put((tuple(ops), done, waiter))
        return done

    @staticmethod
    def session_op(row: SessionRow) -> Op:
        """The statement that stores a new session."""
        return (
            "INSERT INTO sessions VALUES (%s, %s, %s, %s, %s, %s)",
            (
                row.session_id,
                row.scenario_id,
                row.seed,
                _dumps(row.config),
                row.created_at,
                row.closed_at,
            ),
        )

    @staticmethod
    def event_op(row: EventRow) -> Op:
        """The statement that stores one log entry."""
        return (
            "INSERT INTO events VALUES (%s, %s, %s, %s, %s, %s, %s)",
            (
                row.session_id,
                row.sequence,
                row.episode,
                row.tick,
                row.kind,
                row.agent_id,
                _dumps(row.payload),
            ),
        )

    @staticmethod
    def close_op(session_id: str, at: float | None = None) -> Op:
        """The statement that marks a session closed."""
        return (
            "UPDATE sessions SET closed_at = %s WHERE session_id = %s",
            (time.time() if at is None else at, session_id),
        )

    @staticmethod
    def request_op(request_key: str, session_id: str, fingerprint: str) -> Op:
        """The statement that stores which session a CreateSession request id made."""
        return (
            "INSERT INTO requests VALUES (%s, %s, %s)",
            (request_key, session_id, fingerprint),
        )

    def _write_loop(self) -> None:
        conn: psycopg.Connection[Any] | None = None
        while True:
            item = self._queue.get()
            if item is _STOP:
                break
            batch = [item]
            while len(batch) < self._max_batch:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is _STOP:
                    self._queue.put(_STOP)
                    break
                batch.append(more)
            # A future its waiter cancelled before the batch started is dropped with its
            # statements; the rest are marked running so nothing can cancel them any more.
            batch = [item for item in batch if item[1].set_running_or_notify_cancel()]
            if not batch:
                continue
            try:
                if conn is None or conn.closed:
                    conn = self._connect_writer()
                self._commit(conn, batch)
            except (psycopg.OperationalError, psycopg.InterfaceError, StoreError) as exc:
                # The server went away or refuses to write: nothing of the batch is stored (a
                # commit whose answer was lost is not acknowledged either); connect afresh.
                if conn is not None:
                    conn.close()
                conn = None
                why = f"the store at {self._where} cannot write: {_first_line(exc)}"
                self._set_unwritable(why)
                for _, done, _ in batch:
                    done.set_exception(StoreError(why))
            except Exception as exc:  # a bad statement, or a bug: its batch is retried one by one
                self._retry_alone(conn, batch, exc)
            _wake_waiters(batch)
        if conn is not None:
            conn.close()
        with self._readers_lock:
            for reader in self._readers:
                reader.close()
            self._readers.clear()

    def _connect_writer(self) -> psycopg.Connection[Any]:
        conn = connect(self._url)
        try:
            # Durable before acknowledged: a server set to `off` would answer a commit before
            # its WAL is on disk; `local`, `on` and the replica levels all wait for the flush.
            with conn.cursor() as cur:
                cur.execute("SHOW synchronous_commit")
                row = cur.fetchone()
                if row is not None and row[0] == "off":
                    cur.execute("SET synchronous_commit = on")
            conn.commit()
        except BaseException:
            conn.close()
            raise
        return conn

    def _commit(self, conn: psycopg.Connection[Any], batch: list[Any]) -> None:
        try:
            with conn.pipeline(), conn.cursor() as cur:
                for ops, _, _ in batch:
                    for sql, params in ops:
                        cur.execute(sql, params)
            conn.commit()
        except BaseException:
            if not conn.closed:
                with contextlib.suppress(psycopg.Error):
                    conn.rollback()
            raise
        self.commits += 1
        self._set_unwritable(None)
        for _, done, _ in batch:
            done.set_result(None)

    def _retry_alone(
        self, conn: psycopg.Connection[Any] | None, batch: list[Any], exc: BaseException
    ) -> None:
        if conn is None or conn.closed or len(batch) == 1:
            for _, done, _ in batch:
                done.set_exception(StoreError(f"store write failed: {_first_line(exc)}"))
            return
        # One bad statement (a duplicate key, say) must not sink its neighbours.
        for item in batch:
            try:
                self._commit(conn, [item])
            except Exception as single:  # this write's own fault: it alone fails
                item[1].set_exception(StoreError(f"store write failed: {_first_line(single)}"))

    def close(self) -> None:
        """Flush what is queued, stop the writer and close the connections; idempotent."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(_STOP)
        self._writer.join()

    # -- reading ------------------------------------------------------------------------------

    def sessions(self, *, open_only: bool = False) -> list[SessionRow]:
        """Stored sessions, oldest first."""
        sql = "SELECT * FROM sessions"
        if open_only:
            sql += " WHERE closed_at IS NULL"
        rows = self._read(sql + " ORDER BY created_at, session_id", ())
        return [_session_row(r) for r in rows]

    def session(self, session_id: str) -> SessionRow | None:
        """One stored session, open or closed, or None."""
        rows = self._read("SELECT * FROM sessions WHERE session_id = %s", (session_id,))
        return None if not rows else _session_row(rows[0])

    def events(
        self, session_id: str, *, after_sequence: int = 0, through: int | None = None
    ) -> list[EventRow]:
        """A session's stored events in sequence order, after `after_sequence`.

        `through`: the last sequence wanted (None: to the end).
        """
        last = (1 << 62) if through is None else through
        rows = self._read(
            "SELECT * FROM events WHERE session_id = %s AND sequence > %s AND sequence <= %s"
            " ORDER BY sequence",
            (session_id, after_sequence, last),
        )
        return [EventRow(r[0], r[1], r[2], r[3], r[4], r[5], json.loads(r[6])) for r in rows]

    def first_sequence(self, session_id: str, episode: int, tick: int) -> int | None:
        """The sequence of the session's first stored event at or after (episode, tick)."""
        rows = self._read(
            "SELECT MIN(sequence) FROM events WHERE session_id = %s"
            " AND (episode > %s OR (episode = %s AND tick >= %s))",
            (session_id, episode, episode, tick),
        )
        return None if not rows or rows[0][0] is None else int(rows[0][0])

    def request(self, request_key: str) -> tuple[str, str] | None:
        """(session id, fingerprint) of the session a CreateSession request id made, or None."""
        rows = self._read(
            "SELECT session_id, fingerprint FROM requests WHERE request_key = %s", (request_key,)
        )
        return None if not rows else (str(rows[0][0]), str(rows[0][1]))

    def count_events(self) -> int:
        """How many events are stored, over all sessions."""
        return int(self._read("SELECT COUNT(*) FROM events", ())[0][0])

    def _read(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        """Rows of one query, on an idle reader connection (made when none is idle).

        Raises:
            StoreError: the database cannot be reached or read.
        """
        for fresh in (False, True):
            with self._reader(fresh=fresh) as (conn, reused):
                try:
                    with conn.cursor() as cur:
                        cur.execute(sql, params)
                        return cur.fetchall()
                except psycopg.Error as exc:
                    conn.close()  # not given back
                    # An idle connection may have died with a server that restarted since.
                    if reused and isinstance(exc, psycopg.OperationalError):
                        continue
                    why = _first_line(exc)
                    raise StoreError(f"cannot read the store at {self._where}: {why}") from exc
        raise AssertionError("unreachable: a fresh connection's failure is raised above")

    @contextlib.contextmanager
    def _reader(self, *, fresh: bool) -> Iterator[tuple[psycopg.Connection[Any], bool]]:
        """An idle connection given back after use (and whether it was reused), else a new one."""
        conn = None
        if not fresh:
            with self._readers_lock:
                conn = self._readers.pop() if self._readers else None
        reused = conn is not None
        if conn is None:
            conn = connect(self._url, autocommit=True)
        try:
            yield conn, reused
        finally:
            if not conn.closed:
                with self._readers_lock:
                    if self._closed:
                        conn.close()
                    else:
                        self._readers.append(conn)


class PostgresLock:
    """One server per PostgreSQL store: a session advisory lock, held for the server's life.

    The lock lives as long as the connection that took it: PostgreSQL lets go of it when that
    connection ends, however the server dies (SIGKILL included, once the kernel has closed its
    socket), so a crashed server never leaves a stale lock. `metasre serve --handover` waits for
    it as for the SQLite store's lock (see `metasre.service.store.lock`).

    Args:
        url: The store.
        wait: Seconds to wait for another server to let go of the store; 0 fails at once.
        on_wait: Called once, with the holder's description, when the lock has to be waited for.
        slot: A shard's slot (`metasre serve --workers`): the shards of a fleet share the
            store, each holding the lock of its own slot (one server per slot).

    Raises:
        StoreInUseError: another server still holds the store after `wait` seconds.
        StoreError: the database cannot be reached.
    """

    def __init__(
        self,
        url: str,
        *,
        wait: float = 0.0,
        on_wait: Callable[[str], None] | None = None,
        slot: int | None = None,
    ) -> None:
        where = redact(url)
        self._key = SERVING if slot is None else SHARD_SERVING + slot
        conn = connect(url, autocommit=True)
        deadline = time.monotonic() + wait
        waited = False
        try:
            # A server whose machine dies closes no socket: PostgreSQL frees the lock once TCP
            # keepalives find the connection dead (these settings: about 25 s; the system's
            # default, two hours). Ignored on a Unix socket, which a dead process closes.
            conn.execute("SET tcp_keepalives_idle = 10")
            conn.execute("SET tcp_keepalives_interval = 5")
            conn.execute("SET tcp_keepalives_count = 3")
            while not self._try(conn, self._key):
                holder = self._holder(conn, self._key)
                if time.monotonic() >= deadline:
                    raise StoreInUseError(
                        f"the store {where} is in use by another server ({holder}); stop that "
                        "server first, or give this one another store (--store)"
                        + (f" (waited {wait:g} s for it)" if wait > 0 else "")
                    )
                if not waited and on_wait is not None:
                    on_wait(holder)
                waited = True
                time.sleep(POLL_SECONDS)
        except psycopg.Error as exc:
            conn.close()
            raise StoreError(f"cannot lock the store at {where}: {_first_line(exc)}") from exc
        except BaseException:
            conn.close()
            raise
        self._conn: psycopg.Connection[Any] | None = conn

    @staticmethod
    def _try(conn: psycopg.Connection[Any], key: int) -> bool:
        row = conn.execute("SELECT pg_try_advisory_lock(%s, %s)", (LOCK_CLASS, key)).fetchone()
        return bool(row and row[0])

    @staticmethod
    def _holder(conn: psycopg.Connection[Any], key: int) -> str:
        row = conn.execute(
            "SELECT a.application_name, a.backend_start FROM pg_locks l"
            " JOIN pg_stat_activity a ON a.pid = l.pid"
            " WHERE l.locktype = 'advisory' AND l.granted AND l.classid = %s AND l.objid = %s"
            " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            (LOCK_CLASS, key),
        ).fetchone()
        if row is None:
            return "a process that has just let go"
        return (
            f"{row[0] or 'a client that has not said which'}, since {row[1]:%Y-%m-%d %H:%M:%S %Z}"
        )

    @property
    def held(self) -> bool:
        """Whether this lock is still held (its connection still open)."""
        return self._conn is not None and not self._conn.closed

    def release(self) -> None:
        """Let the next server have the store; idempotent."""
        conn, self._conn = self._conn, None
        if conn is not None:
            # Unlocked before the close returns: a closed connection's backend lets go of its
            # locks only when it has exited, a moment later, and the next server may be faster.
            with contextlib.suppress(psycopg.Error):
                conn.execute("SELECT pg_advisory_unlock(%s, %s)", (LOCK_CLASS, self._key))
            conn.close()  # ending the session releases its advisory locks, in any case


def _session_row(r: tuple[Any, ...]) -> SessionRow:
    return SessionRow(r[0], r[1], r[2], json.loads(r[3]), r[4], r[5])


def _first_line(exc: BaseException) -> str:
    """An error's first line: libpq's messages go on with hints and context lines."""
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]
