"""What only the PostgreSQL store has: a versioned schema, a lock in the database, URLs with
passwords. (The contract both stores keep is tested over both in test_store.py.)"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import threading

import psycopg
import pytest

from metasre.agents.client import MetasreClient
from metasre.service import ServerConfig, StoreInUseError, build_server
from metasre.service.core.errors import StoreError
from metasre.service.store.contract import EventRow, SessionRow
from metasre.service.store.postgres import PostgresStore, connect
from metasre.service.store.postgres_schema import MIGRATIONS, migrate
from metasre.simulator import Episode

from .conftest import PAY, pay_solution
from .serve_process import metasre_serve

FAST_RECONNECT = (
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 200),
)


@pytest.fixture
def url(postgres_cluster) -> str:
    return str(postgres_cluster.new_database())


def version(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT version FROM metasre_schema").fetchone()
    assert row is not None
    return int(row[0])


def test_an_older_schema_is_brought_up_to_date_and_a_newer_one_refused(url):
    PostgresStore(url).close()
    assert version(url) == len(MIGRATIONS)
    # A later metasre adds a step: a store at the current version runs only that step, once.
    later = (*MIGRATIONS, "ALTER TABLE sessions ADD COLUMN shard TEXT")
    with connect(url) as conn:
        assert migrate(conn, later, where="t") == len(MIGRATIONS)
        assert migrate(conn, later, where="t") == len(later)
    assert version(url) == len(later)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE metasre_schema SET version = 99")
    with pytest.raises(StoreError, match="schema version 99, made by a newer metasre"):
        PostgresStore(url)


def test_a_failed_step_keeps_nothing_of_itself(url):
    PostgresStore(url).close()
    broken = (*MIGRATIONS, "CREATE TABLE half (x INT); SELECT no_such_function()")
    with connect(url) as conn, pytest.raises(StoreError, match="no_such_function"):
        migrate(conn, broken, where="t")
    assert version(url) == len(MIGRATIONS)
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT to_regclass('half')").fetchone() == (None,)


def test_servers_opening_one_new_database_at_once_make_the_schema_once(url):
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def open_one() -> None:
        start.wait()
        try:
            PostgresStore(url).close()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    assert version(url) == len(MIGRATIONS)


def test_export_refuses_a_database_that_holds_no_store(url):
    done = subprocess.run(
        [sys.executable, "-m", "metasre.cli.main", "export", "--store", url, "--out", "-"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "holds no trajectory store" in done.stderr
    assert "Traceback" not in done.stderr
    with psycopg.connect(url) as conn:  # and made none
        assert conn.execute("SELECT to_regclass('metasre_schema')").fetchone() == (None,)


@pytest.mark.parametrize(
    "bad",
    [
        "postgresql:///no_such_database?host={folder}&user=metasre",
        "postgresql://nobody_here@/postgres?host={folder}",
        "postgresql:///postgres?host={folder}/missing&user=metasre",
    ],
    ids=["no-database", "no-role", "no-server"],
)
def test_an_unusable_url_is_a_clear_error_at_start(postgres_cluster, bad):
    store = bad.format(folder=postgres_cluster.folder)
    done = subprocess.run(
        [sys.executable, "-m", "metasre.cli.main", "serve", "--port", "0", "--store", store],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "cannot connect to the store at postgresql://" in done.stderr
    assert "check --store" in done.stderr
    assert "Traceback" not in done.stderr


async def test_one_server_per_store_and_the_next_takes_over_when_it_stops(url):
    config = ServerConfig(port=0, store_url=url, grace_seconds=0.5)
    first = await build_server(config)
    await first.start()
    try:
        with pytest.raises(StoreInUseError, match=r"in use by another server \(metasre pid"):
            await build_server(config)
    finally:
        await first.stop(0.5)
    second = await build_server(config)  # the lock went with the first's connection
    await second.start()
    await second.stop(0.5)


async def test_a_second_serve_on_a_held_store_says_who_holds_it_in_one_line(url):
    first = await build_server(ServerConfig(port=0, store_url=url))
    try:
        done = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "metasre.cli.main",
            "serve",
            "--port",
            "0",
            "--store",
            url,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await asyncio.wait_for(done.communicate(), 60)
    finally:
        await first.stop(0.5)
    assert done.returncode == 4
    (line,) = err.decode().strip().splitlines()
    assert "is in use by another server (metasre pid" in line


async def test_the_password_in_the_url_is_never_logged(postgres_cluster):
    secret = "s3cr3t-Pa55word"
    url = postgres_cluster.new_database().replace("metasre@", f"metasre:{secret}@")
    async with metasre_serve("--store", url, verbose=True) as served:
        await asyncio.wait_for(served.stop(), 30)
    serving = [e for e in served.events() if e.get("event") == "serving"]
    assert serving and serving[0]["store"].startswith("postgresql://metasre@/t_")
    assert secret not in served.log_text


async def test_an_outage_is_a_passing_problem_and_nothing_unstored_is_acknowledged(
    postgres_cluster, url
):
    store = PostgresStore(url)
    row = EventRow("s", 1, 0, 1, "applied", "a", {"tool": "get_alerts"})
    try:
        await store.write([store.session_op(SessionRow("s", "x/y-v1", 0, {}, 0.0, None))])
        store.events("s")  # a reader connection is kept, and dies with the server
        postgres_cluster.stop()
        try:
            with pytest.raises(StoreError, match="cannot write"):
                await store.write([store.event_op(row)])
            assert store.problem is not None and store.lost is False
            assert store.check() is not None  # idle, it still sees the outage
            assert await store.probe() is not None
        finally:
            postgres_cluster.start()
        assert await store.probe() is None  # the writer connects again
        await store.write([store.event_op(row)])
        assert [e.sequence for e in store.events("s")] == [1]  # the dead reader was replaced
    finally:
        store.close()


async def test_a_server_killed_outright_is_rebuilt_from_postgresql_and_ends_alike(url):
    steps = pay_solution(seed=2)
    async with metasre_serve("--store", url) as first:
        port = int(first.address.rpartition(":")[2])
        client = MetasreClient(first.address, options=FAST_RECONNECT)
        handle = await client.create_session(PAY, seed=2, seats=["a"])
        agent = client.agent(handle.id, handle.tokens["a"])
        await agent.join()
        results = [await agent.call(*steps[0])]
        first.proc.send_signal(signal.SIGKILL)  # no drain, no handover, no goodbye
        await asyncio.wait_for(first.proc.wait(), 30)
    async with metasre_serve("--store", url, port=port) as second:
        await agent.join(resume=True)  # the server has rebuilt the session before it serves
        for step in steps[1:]:
            results.append(await agent.call(*step))
        grade = await client.get_grade(handle.id)
        await agent.close()
        await client.close()
        assert await second.stop() == 0
    recovered = [e for e in second.events() if e["event"] == "session_recovered"]
    assert [e["session_id"] for e in recovered] == [handle.id]
    straight = Episode.make(PAY, 2)
    for tool, args in steps:
        straight.apply("a", tool, args)
    assert [r.tick for r in results] == list(range(1, len(steps) + 1))
    assert grade["grade"]["total"] == pytest.approx(straight.grade().total)
    assert grade["grade"]["resolved"] is True
