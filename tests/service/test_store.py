"""The trajectory store's contract, over both kinds (SQLite, PostgreSQL): group commits,
durability, clear failures. `store_where` (conftest) gives each test a fresh store of each kind;
the PostgreSQL one is a database in a throwaway cluster the tests start themselves."""

import asyncio
import os
import signal
import stat
import subprocess
import sys
import textwrap

import pytest

from metasre.service.store.opening import open_store
from metasre.service.store.sqlite import EventRow, SessionRow, StoreError, TrajectoryStore

FULL_DISK = {
    # Every insert into events now fails as a full disk makes it fail, in each store's terms.
    "sqlite": [
        "CREATE TRIGGER full BEFORE INSERT ON events BEGIN "
        "SELECT RAISE(ABORT, 'database or disk is full'); END"
    ],
    "postgres": [
        "CREATE FUNCTION disk_full() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "RAISE EXCEPTION 'could not extend file: No space left on device' "
        "USING ERRCODE = 'disk_full'; END $$",
        "CREATE TRIGGER disk_full BEFORE INSERT ON events FOR EACH ROW"
        " EXECUTE FUNCTION disk_full()",
    ],
}
ROOM_AGAIN = {"sqlite": ["DROP TRIGGER full"], "postgres": ["DROP TRIGGER disk_full ON events"]}


def kind(where: object) -> str:
    return "sqlite" if not isinstance(where, str) else "postgres"


def session(sid: str = "s1") -> SessionRow:
    return SessionRow(sid, "meta-sre/ad-ranking-crash-v2", 7, {"seats": ["a", "b"]}, 1.0, None)


def event(sid: str, seq: int) -> EventRow:
    return EventRow(sid, seq, 0, seq, "applied", "a", {"tool": "get_alerts", "n": seq})


def test_sessions_and_events_round_trip(store_where):
    store = open_store(store_where)
    try:
        store.submit([store.session_op(session())]).result()
        store.submit([store.event_op(event("s1", i)) for i in (1, 2, 3)]).result()
        store.submit([store.close_op("s1", at=9.0)]).result()
    finally:
        store.close()
    reopened = open_store(store_where)
    try:
        (row,) = reopened.sessions()
        assert row == SessionRow(
            "s1", "meta-sre/ad-ranking-crash-v2", 7, {"seats": ["a", "b"]}, 1.0, 9.0
        )
        assert [e.sequence for e in reopened.events("s1", after_sequence=1)] == [2, 3]
        assert reopened.events("s1")[0].payload == {"tool": "get_alerts", "n": 1}
        assert reopened.sessions(open_only=True) == []
    finally:
        reopened.close()


def test_concurrent_writers_share_commits(store_where):
    store = open_store(store_where)

    async def main() -> None:
        await store.write([store.session_op(session(f"s{i}")) for i in range(20)])
        await asyncio.gather(
            *(store.write([store.event_op(event(f"s{i % 20}", i))]) for i in range(1, 401))
        )

    try:
        before = store.commits
        asyncio.run(main())
        assert store.count_events() == 400
        # 400 acknowledged writes needed far fewer transactions than writes.
        assert store.commits - before < 400
    finally:
        store.close()


def test_a_bad_write_fails_alone_and_its_neighbours_commit(store_where):
    store = open_store(store_where)
    try:
        store.submit([store.session_op(session())]).result()
        store.submit([store.event_op(event("s1", 1))]).result()
        dup = store.submit([store.event_op(event("s1", 1))])
        fine = store.submit([store.event_op(event("s1", 2))])
        with pytest.raises(StoreError):
            dup.result()
        fine.result()
        assert [e.sequence for e in store.events("s1")] == [1, 2]
    finally:
        store.close()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through read-only permissions")
def test_a_read_only_file_fails_writes_with_a_clear_error(tmp_path):
    path = tmp_path / "t.db"
    TrajectoryStore(path).close()
    path.chmod(stat.S_IRUSR)
    with pytest.raises(StoreError, match="cannot"):
        TrajectoryStore(path).submit([("SELECT 1", ())]).result()


def test_a_store_that_cannot_write_refuses_instead_of_acknowledging(store_where):
    store = open_store(store_where)

    async def main() -> None:
        await store.write([store.session_op(session())])
        await store.write([(sql, ()) for sql in FULL_DISK[kind(store_where)]])
        with pytest.raises(StoreError, match=r"disk is full|No space left"):
            await store.write([store.event_op(event("s1", 1))])
        assert store.count_events() == 0
        # A full disk passes: the store says it cannot write until a write succeeds again.
        assert store.problem is not None and store.lost is False
        await store.write([(sql, ()) for sql in ROOM_AGAIN[kind(store_where)]])
        assert await store.probe() is None
        await store.write([store.event_op(event("s1", 1))])
        assert store.count_events() == 1

    try:
        asyncio.run(main())
    finally:
        store.close()


def test_every_acknowledged_write_survives_sigkill(store_where):
    child = textwrap.dedent(f"""
        from metasre.service.store.opening import open_store
        from metasre.service.store.sqlite import EventRow, SessionRow
        store = open_store({str(store_where)!r})
        store.submit([store.session_op(SessionRow("s", "x/y-v1", 0, {{}}, 0.0, None))]).result()
        seq = 0
        while True:
            seq += 1
            row = EventRow("s", seq, 0, seq, "applied", "a", {{}})
            store.submit([store.event_op(row)]).result()
            print(seq, flush=True)
    """)
    with subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True) as proc:
        acked = 0
        assert proc.stdout is not None
        while acked < 200:
            acked = int(proc.stdout.readline())
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    store = open_store(store_where)
    try:
        stored = [e.sequence for e in store.events("s")]
        assert stored[:acked] == list(range(1, acked + 1))
    finally:
        store.close()


def test_an_unexpected_error_fails_its_batch_and_the_writer_goes_on(store_where):
    store = open_store(store_where)
    real_commit = store._commit
    broken = {"once": True}

    def commit(conn, batch):
        if broken.pop("once", False):
            raise TypeError("a bug in a statement's parameters")
        real_commit(conn, batch)

    store._commit = commit

    async def main() -> None:
        with pytest.raises(StoreError, match="a bug in a statement"):
            await asyncio.wait_for(store.write([store.session_op(session("s1"))]), 10)
        await asyncio.wait_for(store.write([store.session_op(session("s2"))]), 10)

    try:
        asyncio.run(main())
        assert [row.session_id for row in store.sessions()] == ["s2"]
    finally:
        store.close()


def test_a_cancelled_write_that_has_not_begun_is_dropped(store_where):
    store = open_store(store_where)

    async def main() -> None:
        await store.write([store.session_op(session("s1"))])
        task = asyncio.create_task(store.write([store.event_op(event("s1", 1))]))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.wait_for(store.write([store.event_op(event("s1", 2))]), 10)

    try:
        asyncio.run(main())
        assert [e.sequence for e in store.events("s1")] in ([2], [1, 2])
    finally:
        store.close()
