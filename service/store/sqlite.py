"""The trajectory store: sessions and every logged event in one SQLite file (WAL), the default.

Writes go through one writer thread that commits whatever has queued up in a single transaction
(group commit), so many sessions share each fsync; a write's future resolves only after its
transaction is committed, which is what lets the server acknowledge a call only once it is
stored. Reads use their own connections and never wait for the writer.

A committed transaction counts as stored only if the files it went to are still the store's:
SQLite writes on through descriptors it already holds when the database or its WAL is removed
(the data lands in a file nobody will ever open again), and a truncated file loses what it held.
So after each commit the writer checks, with one `stat` per file, that the database and its WAL
are the very files it opened (device and inode) and have not shrunk (SQLite only grows them:
the store never deletes rows or vacuums, and the WAL is reused, never truncated). If not, the
store is lost: that batch fails and every write after it is refused; only a restart on a sound
store helps. A disk that is full (or a file made read-only) is a passing problem instead: the
store says it cannot write (`problem`) until a write succeeds again (`probe`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Literal

import orjson

from ..core.errors import StoreError, StoreLostError
from .contract import EventRow, Op, SessionRow

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    session_id  TEXT PRIMARY KEY,
    scenario_id TEXT NOT NULL,
    seed        INTEGER NOT NULL,
    config      TEXT NOT NULL,
    created_at  REAL NOT NULL,
    closed_at   REAL
);
CREATE TABLE IF NOT EXISTS events (
    session_id TEXT NOT NULL REFERENCES sessions(session_id),
    sequence   INTEGER NOT NULL,
    episode    INTEGER NOT NULL,
    tick       INTEGER NOT NULL,
    kind       TEXT NOT NULL,
    agent_id   TEXT NOT NULL,
    payload    TEXT NOT NULL,
    PRIMARY KEY (session_id, sequence)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS requests (
    request_key TEXT PRIMARY KEY,
    session_id  TEXT NOT NULL REFERENCES sessions(session_id),
    fingerprint TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS probes (
    id         INTEGER PRIMARY KEY,
    checked_at REAL NOT NULL
);
"""
"""`requests`: the CreateSession request ids (see `metasre.service.registry`), stored with their
session. `probes`: one row rewritten by `probe`, to learn whether the store can write again."""

Synchronous = Literal["OFF", "NORMAL", "FULL"]


_Op = Op
_Waiter = tuple[asyncio.AbstractEventLoop, "asyncio.Future[None]"]
"""The loop of an async writer and the future it awaits."""
_STOP = object()


class TrajectoryStore:
    """One SQLite file holding every session and event; see the module docstring."""

    def __init__(
        self,
        path: str | Path,
        *,
        synchronous: Synchronous = "FULL",
        max_batch: int = 512,
        on_problem: Callable[[str | None], None] | None = None,
    ) -> None:
        self.path = Path(path)
        self._synchronous = synchronous
        self._max_batch = max_batch
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._closed = False
        self._failure: str | None = None
        self._files_remain = False
        """The store was lost only to a header overwritten in place: its files may be read."""
        """Why the store is lost for good (its files went), once it is."""
        self._unwritable: str | None = None
        """Why the last write failed on a disk or file error, until a write succeeds again."""
        self.on_problem = on_problem
        """Called (from the writer thread, or whoever noticed) when `problem` changes."""
        self._files = _Files(self.path)
        self._lookup: sqlite3.Connection | None = None
        """A read-only connection kept for `request`, which every CreateSession with a request
        id asks (a connection opened per lookup cost ~190 us of CPU); `_lookup_lock` guards it."""
        self._lookup_lock = threading.Lock()
        self.commits = 0
        """Transactions committed so far (a batch is one)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the store's folder {self.path.parent}: {exc}") from exc
        # Create the schema up front so that a bad path fails here, not on the first write.
        conn = self._connect()
        try:
            conn.executescript(SCHEMA)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot initialise the store at {self.path}: {exc}") from exc
        finally:
            conn.close()
        try:
            self._files.note_database()
        except OSError as exc:
            raise StoreError(f"cannot open the store at {self.path}: {exc}") from exc
        self._writer = threading.Thread(target=self._write_loop, name="store-writer", daemon=True)
        self._writer.start()

    def _connect(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(
                self.path, timeout=30, check_same_thread=False, isolation_level=None
            )
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={self._synchronous}")
            conn.execute("PRAGMA foreign_keys=ON")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the store at {self.path}: {exc}") from exc
        return conn

    # -- health -------------------------------------------------------------------------------

    @property
    def where(self) -> str:
        """The store's file, for people and logs."""
        return str(self.path)

    @property
    def problem(self) -> str | None:
        """Why the store cannot record anything now; None when it can (as far as is known)."""
        return self._failure or self._unwritable

    @property
    def lost(self) -> bool:
        """Whether the store's files were removed or truncated under it (for good)."""
        return self._failure is not None

    def check(self) -> str | None:
        """Look at the store's files now (a `stat` each; blocking); `problem` afterwards.

        Writes check after every commit; this notices a store removed while nothing is written.
        """
        if self._failure is None and not self._closed:
            found = self._files.check()
            if found is not None:
                self._lose(found)
        return self.problem

    async def probe(self) -> str | None:
        """Try a small write, to learn whether the store can write again; `problem` afterwards."""
        with contextlib.suppress(StoreError):
            await self.write([("INSERT OR REPLACE INTO probes VALUES (1, ?)", (time.time(),))])
        return self.problem

    def _lose(self, why: str) -> None:
        if self._failure is None:
            self._failure = why
            self._files_remain = self._files.header_lost
            self._changed()

    def _lost_error(self, *, written: bool = False) -> StoreLostError:
        """The error of a write refused (or committed, `written`) once the store is lost."""
        assert self._failure is not None
        return StoreLostError(self._failure, files_remain=self._files_remain, written=written)

    def _changed(self) -> None:
        if self.on_problem is not None:
            self.on_problem(self.problem)

    # -- writing ------------------------------------------------------------------------------

    def submit(self, ops: Sequence[_Op]) -> Future[None]:
        """Queue statements to run in one transaction; the future resolves once committed."""
        return self._submit(ops, None)

    async def write(self, ops: Sequence[_Op]) -> None:
        """Run statements in one transaction and wait until they are committed.

        Raises:
            StoreError: the transaction could not be committed; nothing of it is stored.
        """
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        done = self._submit(ops, (loop, waiter))
        if done.done():
            done.result()  # refused at once: the store has failed
        try:
            await waiter
        except asyncio.CancelledError:
            done.cancel()  # dropped with its statements unless the writer has begun them
            raise

    def _submit(self, ops: Sequence[_Op], waiter: _Waiter | None) -> Future[None]:
        if self._closed:
            raise StoreError(f"the store at {self.path} is closed")
        done: Future[None] = Future()
        if self._failure is not None:
            done.set_exception(self._lost_error())
            return done
        self._queue.put((tuple(ops), done, waiter))
        return done

    @staticmethod
    def session_op(row: SessionRow) -> _Op:
        """The statement that stores a new session."""
        return (
            "INSERT INTO sessions VALUES (?, ?, ?, ?, ?, ?)",
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
    def event_op(row: EventRow) -> _Op:
        """The statement that stores one log entry."""
        return (
            "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?)",
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
    def close_op(session_id: str, at: float | None = None) -> _Op:
        """The statement that marks a session closed."""
        return (
            "UPDATE sessions SET closed_at = ? WHERE session_id = ?",
            (time.time() if at is None else at, session_id),
        )

    @staticmethod
    def request_op(request_key: str, session_id: str, fingerprint: str) -> _Op:
        """The statement that stores which session a CreateSession request id made."""
        return (
            "INSERT INTO requests VALUES (?, ?, ?)",
            (request_key, session_id, fingerprint),
        )

    def _write_loop(self) -> None:
        conn: sqlite3.Connection | None = None
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
                if conn is None:
                    conn = self._connect()
                self._commit(conn, batch)
            except (sqlite3.Error, StoreError, OSError) as exc:
                # SQLite may fail on a file cut under it before the check after a commit runs.
                lost = self._failure or self._files.check()
                if lost is not None:
                    self._lose(lost)
                if lost is not None and not isinstance(exc, StoreLostError):
                    exc = self._lost_error()
                self._fail_batch(conn, batch, exc)
            except Exception as exc:  # anything else fails its batch, never the writer
                self._fail_batch(conn, batch, exc)
            _wake_waiters(batch)
        if conn is not None:
            conn.close()
        self._files.close()

    def _commit(self, conn: sqlite3.Connection, batch: list[Any]) -> None:
        if self._failure is not None:  # lost while this batch waited
            raise self._lost_error()
        conn.execute("BEGIN IMMEDIATE")
        for ops, _, _ in batch:
            for sql, params in ops:
                conn.execute(sql, params)
        conn.execute("COMMIT")
        # Committed to the files SQLite holds open: stored only if they are still the store.
        lost = self._files.check(after_commit=True)
        if lost is not None:
            self._lose(lost)
            raise self._lost_error(written=True)
        self.commits += 1
        if self._unwritable is not None:
            self._unwritable = None
            self._changed()
        for _, done, _ in batch:
            done.set_result(None)

    def _fail_batch(
        self,
        conn: sqlite3.Connection | None,
        batch: list[Any],
        exc: BaseException,
    ) -> None:
        if conn is not None and conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
        if isinstance(exc, StoreLostError):
            for _, done, _ in batch:
                done.set_exception(
                    StoreLostError(str(exc), files_remain=exc.files_remain, written=exc.written)
                )
            return
        if _is_disk_error(exc) and self._unwritable is None:
            self._unwritable = f"the store at {self.path} cannot write: {exc}"
            self._changed()
        if len(batch) > 1 and conn is not None and not _is_disk_error(exc):
            # One bad statement (a duplicate key, say) must not sink its neighbours: retry alone.
            for item in batch:
                try:
                    self._commit(conn, [item])
                except Exception as single:  # this write's own fault: it alone fails
                    if conn.in_transaction:
                        with contextlib.suppress(sqlite3.Error):
                            conn.execute("ROLLBACK")
                    item[1].set_exception(StoreError(f"store write failed: {single}"))
            return
        message = f"the store at {self.path} cannot write: {exc}"
        for _, done, _ in batch:
            done.set_exception(StoreError(message))

    def close(self) -> None:
        """Flush what is queued, stop the writer and close the file; idempotent."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(_STOP)
        self._writer.join()
        with self._lookup_lock:
            self._drop_lookup()

    # -- reading ------------------------------------------------------------------------------

    def sessions(self, *, open_only: bool = False) -> list[SessionRow]:
        """Stored sessions, oldest first."""
        sql = "SELECT * FROM sessions"
        if open_only:
            sql += " WHERE closed_at IS NULL"
        with self._reader() as conn:
            rows = conn.execute(sql + " ORDER BY created_at, session_id").fetchall()
        return [SessionRow(r[0], r[1], r[2], json.loads(r[3]), r[4], r[5]) for r in rows]

    def session(self, session_id: str) -> SessionRow | None:
        """One stored session, open or closed, or None."""
        with self._reader() as conn:
            r = conn.execute(
                "SELECT * FROM sessions WHERE session_id = ?", (session_id,)
            ).fetchone()
        return None if r is None else SessionRow(r[0], r[1], r[2], json.loads(r[3]), r[4], r[5])

    def events(
        self, session_id: str, *, after_sequence: int = 0, through: int | None = None
    ) -> list[EventRow]:
        """A session's stored events in sequence order, after `after_sequence`.

        `through`: the last sequence wanted (None: to the end).
        """
        last = (1 << 62) if through is None else through
        with self._reader() as conn:
            rows = conn.execute(
                "SELECT * FROM events WHERE session_id = ? AND sequence > ? AND sequence <= ?"
                " ORDER BY sequence",
                (session_id, after_sequence, last),
            ).fetchall()
        return [EventRow(r[0], r[1], r[2], r[3], r[4], r[5], json.loads(r[6])) for r in rows]

    def first_sequence(self, session_id: str, episode: int, tick: int) -> int | None:
        """The sequence of the session's first stored event at or after (episode, tick)."""
        with self._reader() as conn:
            row = conn.execute(
                "SELECT MIN(sequence) FROM events WHERE session_id = ?"
                " AND (episode > ? OR (episode = ? AND tick >= ?))",
                (session_id, episode, episode, tick),
            ).fetchone()
        return None if row is None or row[0] is None else int(row[0])

    def request(self, request_key: str) -> tuple[str, str] | None:
        """(session id, fingerprint) of the session a CreateSession request id made, or None."""
        sql = "SELECT session_id, fingerprint FROM requests WHERE request_key = ?"
        if self._failure is not None:  # a lost store: read what its path holds now, afresh
            with self._reader() as conn:
                rows = conn.execute(sql, (request_key,)).fetchall()
        else:
            with self._lookup_lock:
                try:
                    if self._lookup is None:
                        self._lookup = sqlite3.connect(
                            f"file:{self.path}?mode=ro",
                            uri=True,
                            timeout=30,
                            check_same_thread=False,
                        )
                    # fetchall: the statement ends here, holding no read transaction open
                    # (an open one would keep the writer's checkpoints from ending the WAL).
                    rows = self._lookup.execute(sql, (request_key,)).fetchall()
                except sqlite3.Error as exc:
                    self._drop_lookup()
                    raise StoreError(f"the store at {self.path} cannot be read: {exc}") from exc
        return None if not rows else (str(rows[0][0]), str(rows[0][1]))

    def _drop_lookup(self) -> None:
        if self._lookup is not None:
            with contextlib.suppress(sqlite3.Error):
                self._lookup.close()
            self._lookup = None

    def count_events(self) -> int:
        """How many events are stored, over all sessions."""
        with self._reader() as conn:
            (n,) = conn.execute("SELECT COUNT(*) FROM events").fetchone()
        return int(n)

    def _reader(self) -> _Reader:
        return _Reader(self.path)


_HEADERS: tuple[tuple[bytes, ...], ...] = (
    (b"SQLite format 3\0",),
    (b"\x37\x7f\x06\x82", b"\x37\x7f\x06\x83"),
)
"""How the database file and the WAL begin (the WAL's magic number, either byte order)."""


class _Files:
    """The store's files as the writer last saw them: identity, size and a descriptor of each.

    The descriptors (to read each file's header) stay open until `close`: closing any
    descriptor of the database file would drop the POSIX locks SQLite's connections hold on it,
    in this process.
    """

    def __init__(self, path: Path) -> None:
        self._paths = (path, path.with_name(path.name + "-wal"))
        self._seen: dict[Path, tuple[int, int, int]] = {}
        self._fds: dict[Path, int] = {}
        self.header_lost = False
        """What `check` last found was a header overwritten in place (the data may remain)."""
        self._lock = threading.Lock()  # the writer and the server's periodic check

    def note_database(self) -> None:
        """Take the database file as it is now (after the schema is made)."""
        with self._lock:
            self._note(self._paths[0])

    def _note(self, path: Path) -> None:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        st = os.fstat(fd)
        self._fds[path] = fd
        self._seen[path] = (st.st_dev, st.st_ino, st.st_size)

    def close(self) -> None:
        with self._lock:
            for fd in self._fds.values():
                os.close(fd)
            self._fds.clear()

    def check(self, *, after_commit: bool = False) -> str | None:
        """What happened to a file, if one was removed, replaced or cut; None if all is well.

        After a commit the writer's connection is open, so the WAL exists and is noted on first
        sight (before, closing connections may remove it, as SQLite does with the last one).
        """
        with self._lock:
            return self._check(after_commit)

    def _check(self, after_commit: bool) -> str | None:
        for path, header in zip(self._paths, _HEADERS, strict=True):
            seen = self._seen.get(path)
            try:
                st = os.stat(path)
            except FileNotFoundError:
                if seen is None:
                    continue
                return f"the store file {path} was removed while the server was using it"
            except OSError as exc:
                return f"the store file {path} cannot be examined: {exc.strerror or exc}"
            if seen is None:
                if after_commit:
                    self._note(path)
                continue
            if (st.st_dev, st.st_ino) != seen[:2]:
                return f"the store file {path} was replaced by another file while in use"
            if st.st_size < seen[2]:
                return (
                    f"the store file {path} was truncated while in use ({seen[2]} bytes, "
                    f"now {st.st_size})"
                )
            # Cut and written again past the cut, a file regains its size but not its start.
            fd = self._fds.get(path)  # none once the store has closed
            if fd is not None and not os.pread(fd, 16, 0).startswith(header):
                self.header_lost = True
                return (
                    f"the store file {path} had its header overwritten while in use (the same "
                    "file, of the same size or more)"
                )
            self._seen[path] = (st.st_dev, st.st_ino, st.st_size)
        return None


def _wake_waiters(batch: list[Any]) -> None:
    # One wake-up per loop per batch: a future per write through wrap_future cost each write a
    # call_soon_threadsafe (a write to the loop's self-pipe) and a hop through the busy loop.
    by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[None], Future[None]]]] = {}
    for _, done, waiter in batch:
        if waiter is not None:
            by_loop.setdefault(waiter[0], []).append((waiter[1], done))
    for loop, pairs in by_loop.items():
        with contextlib.suppress(RuntimeError):  # a loop that has closed waits for nothing
            loop.call_soon_threadsafe(_settle, pairs)


def _settle(pairs: list[tuple[asyncio.Future[None], Future[None]]]) -> None:
    for waiter, done in pairs:
        if waiter.done():  # its writer was cancelled
            continue
        error = done.exception()
        if error is None:
            waiter.set_result(None)
        else:
            waiter.set_exception(error)


class _Reader:
    """A short-lived read-only connection (WAL readers never block the writer).

    SQLite's own errors (a file removed, cut or overwritten under the server) leave it as
    `StoreError`, which every caller maps to STORE_UNAVAILABLE: never an INTERNAL.
    """

    def __init__(self, path: Path) -> None:
        self._path = path
        self._conn: sqlite3.Connection | None = None

    def __enter__(self) -> sqlite3.Connection:
        try:
            self._conn = sqlite3.connect(f"file:{self._path}?mode=ro", uri=True, timeout=30)
        except sqlite3.Error as exc:
            raise self._unreadable(exc) from exc
        return self._conn

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: object
    ) -> None:
        assert self._conn is not None
        with contextlib.suppress(sqlite3.Error):
            self._conn.close()
        if isinstance(exc, sqlite3.Error):
            raise self._unreadable(exc) from exc

    def _unreadable(self, exc: sqlite3.Error) -> StoreError:
        return StoreError(f"the store at {self._path} cannot be read: {exc}")


_ORJSON_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def _dumps(value: Any) -> str:
    try:
        return orjson.dumps(value, default=str, option=_ORJSON_OPTIONS).decode()
    except orjson.JSONEncodeError:
        # What orjson refuses (integers past 64 bits, say) the json module still writes.
        return json.dumps(value, separators=(",", ":"), sort_keys=True, default=str)


def _is_disk_error(exc: BaseException) -> bool:
    text = str(exc).lower()
    return any(s in text for s in ("disk", "readonly", "read-only", "i/o", "full", "permi"))
