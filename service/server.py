"""The gRPC server: `build_server(config)` wires servicers, health and reflection; `serve` runs it.

`run_server(serve(...))` runs it on the event loop a server process uses (`server_loop`).

Start the sandbox helper (`prepare_sandbox`) before the server: forking a process that runs
gRPC is unsafe, so the fork server must exist before any gRPC thread does.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar, cast

import grpc
import structlog
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

# The asyncio health servicer is not in the grpc_health stubs.
from grpc_health.v1._async import HealthServicer
from grpc_reflection.v1alpha import reflection, reflection_pb2
from grpc_reflection.v1alpha._async import ReflectionServicer

from metasre.v1 import (
    agent_pb2,
    control_pb2,
    control_pb2_grpc,
    watch_pb2,
    watch_pb2_grpc,
)

from ..simulator.catalog import Catalog, default_catalog
from ..simulator.probe_calls import PROBE_PATH
from ..simulator.sandbox import (
    TestRunner,
    allow_weak_isolation,
    default_grader_runner,
    default_runner,
    default_traffic_runner,
)
from .config import ServerConfig
from .core.errors import ServerDrainingError, ServerHandingOverError
from .gc_freeze import GcFreezer
from .registry import Registry
from .store.contract import Store, StoreHold
from .store.opening import describe_store, hold_store, open_store
from .wire import AgentServicer, ControlServicer, WatchServicer
from .wire.agent import add_agent_service
from .wire.undecodable import RECEIVE_SLACK, RejectUndecodable

log = structlog.get_logger("metasre.service.server")

T = TypeVar("T")

EVENT_LOOP_ENV = "METASRE_EVENT_LOOP"
"""`asyncio` runs a server on the standard library's loop even where uvloop is installed."""

SERVICE_NAMES = (
    control_pb2.DESCRIPTOR.services_by_name["ControlService"].full_name,
    agent_pb2.DESCRIPTOR.services_by_name["AgentService"].full_name,
    watch_pb2.DESCRIPTOR.services_by_name["WatchService"].full_name,
)
"""The fully qualified names of the services, as health and reflection list them."""


STORE_CHECK_SECONDS = 1.0
"""How often the server looks at its store's files between writes, and retries one that could
not write (a full disk): how soon health follows a store removed while idle, or back to room."""

REFLECTION_V1 = "grpc.reflection.v1.ServerReflection"
"""grpcio-reflection serves only v1alpha; newer tools (grpcurl, Postman) ask for v1 first."""


def _serve_reflection_v1(names: tuple[str, ...], server: grpc.aio.Server) -> None:
    """Serve reflection v1 with the v1alpha servicer.

    The two protos' messages are identical field for field, so v1 requests decode as v1alpha
    ones and the answers encode alike.
    """
    servicer = ReflectionServicer(names)
    handler = grpc.method_handlers_generic_handler(
        REFLECTION_V1,
        {
            "ServerReflectionInfo": grpc.stream_stream_rpc_method_handler(
                servicer.ServerReflectionInfo,
                reflection_pb2.ServerReflectionRequest.FromString,
                reflection_pb2.ServerReflectionResponse.SerializeToString,
            )
        },
    )
    server.add_generic_rpc_handlers((handler,))


def prepare_sandbox(*, weak_isolation: bool = False) -> TestRunner:
    """Start the shared sandbox runners' helpers (visible, traffic and grader) and warm them.

    Args:
        weak_isolation: Serve even where a required containment layer (Landlock, seccomp)
            is missing; logged loudly and shown in GetServerInfo.

    Raises:
        WeakIsolationError: a required layer is missing and weak isolation was not allowed.
    """
    allow_weak_isolation(weak_isolation)
    runner = default_runner()
    test = "tests/test_warm.py"
    runner.run({test: b"def test_warm():\n    assert True\n"}, [test])
    probes = PROBE_PATH
    warm = {probes: b"def warm():\n    return 1\n"}
    default_grader_runner().observe(warm, probes, ["warm"])
    default_traffic_runner().observe(warm, probes, ["warm"])
    return runner


class MetasreServer:
    """A built server: start it, read its port, stop it gracefully."""

    def __init__(
        self,
        config: ServerConfig,
        server: grpc.aio.Server,
        registry: Registry,
        health_servicer: Any,
        port: int,
        agents: AgentServicer | None = None,
        lock: StoreHold | None = None,
    ) -> None:
        self.config = config
        self._agents = agents
        self.registry = registry
        self._server = server
        self._health = health_servicer
        self._port = port
        self._reaper: asyncio.Task[None] | None = None
        self._heap = GcFreezer() if config.manage_gc else None
        self._heap_task: asyncio.Task[None] | None = None
        self._store_task: asyncio.Task[None] | None = None
        self._telling: set[asyncio.Future[None]] = set()
        self._stopped = False
        self._lock = lock
        self._loop = asyncio.get_running_loop()
        if registry.store is not None:
            registry.store.on_problem = self._store_problem_seen

    @property
    def store(self) -> Store | None:
        """The trajectory store, if the server records sessions."""
        return self.registry.store

    @property
    def port(self) -> int:
        """The port the server listens on (the real one when the config said 0)."""
        return self._port

    @property
    def address(self) -> str:
        """host:port to dial."""
        return f"{self.config.host}:{self._port}"

    async def start(self) -> None:
        """Rebuild the sessions the store holds open, then serve and mark every service SERVING."""
        recovered = await self.registry.recover()
        if recovered:
            log.info("sessions_recovered", sessions=recovered)
        await self._server.start()
        for name in ("", *SERVICE_NAMES):
            await self._health.set(name, health_pb2.HealthCheckResponse.SERVING)
        self._reaper = asyncio.create_task(self._reap())
        if self.store is not None:
            self._store_task = asyncio.create_task(self._watch_store(self.store))
        if self._heap is not None:
            registry = self.registry
            self._heap.start()
            self._heap_task = asyncio.create_task(
                self._heap.run(lambda: (len(registry.sessions()), registry.closed_total))
            )
        log.info(
            "serving",
            address=self.address,
            tls=self.config.tls_cert is not None,
            store=self.store.where if self.store is not None else None,
            event_loop=type(asyncio.get_running_loop()).__module__.partition(".")[0],
        )

    async def stop(self, grace: float | None = None) -> None:
        """Drain and stop.

        Health goes NOT_SERVING, new work is refused, calls being applied finish, sessions close
        (their streams end, their close is stored), then the server stops, giving other calls
        `grace` seconds, and the store is flushed and closed.
        """
        if self._stopped:
            return
        self._stopped = True
        log.info("draining", sessions=len(self.registry.sessions()))
        await self._health.enter_graceful_shutdown()
        if self._reaper is not None:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
        for task in (self._heap_task, self._store_task):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        handover = self.config.handover and self.store is not None
        await self.registry.drain(handover=handover)
        if self._agents is not None:
            # Streams that hold no seat: ended with the reason, not cancelled by gRPC's stop.
            await self._agents.end_streams(
                ServerHandingOverError(self.registry.handing_over or "")
                if handover
                else ServerDrainingError("the server is shutting down; try another server")
            )
        await self._server.stop(self.config.grace_seconds if grace is None else grace)
        if self._heap is not None:
            self._heap.stop()
        if self.store is not None:
            await asyncio.to_thread(self.store.close)
        if self._lock is not None:
            self._lock.release()  # after the close: the next server finds the store complete
        log.info("stopped")

    async def wait_for_termination(self) -> None:
        """Until the server stops."""
        await self._server.wait_for_termination()

    def _store_problem_seen(self, problem: str | None) -> None:
        # Called from the store's writer thread, or the thread of a check.
        def tell() -> None:
            task = asyncio.ensure_future(self._store_problem(problem))
            self._telling.add(task)  # held until done: the loop keeps only weak references
            task.add_done_callback(self._telling.discard)

        with contextlib.suppress(RuntimeError):  # the loop has closed: nothing to tell
            self._loop.call_soon_threadsafe(tell)

    async def _store_problem(self, problem: str | None) -> None:
        """Health follows the store: NOT_SERVING while it cannot record anything."""
        store = self.store
        if self._stopped or store is None or problem != store.problem:
            return  # stale news: a later call says what holds now
        if problem is None:
            log.warning("store_writable_again", store=store.where)
            status = health_pb2.HealthCheckResponse.SERVING
        else:
            # Loud: every call that must be stored fails until this passes (or, when the files
            # are gone, until the server is restarted on a sound store).
            log.critical(
                "store_unavailable",
                store=store.where,
                error=problem,
                lost=store.lost,
                action=(
                    "restart the server on a sound store"
                    if store.lost
                    else "free disk space, or bring the store's database back"
                ),
            )
            status = health_pb2.HealthCheckResponse.NOT_SERVING
        for name in ("", *SERVICE_NAMES):
            await self._health.set(name, status)

    async def _watch_store(self, store: Store) -> None:
        """Notice a store removed while nothing is written; retry a store that could not write."""
        while True:
            await asyncio.sleep(STORE_CHECK_SECONDS)
            try:
                await asyncio.to_thread(store.check)
                if store.problem is not None and not store.lost:
                    await store.probe()
            except Exception:  # the watch must survive whatever the file system does
                log.exception("store_check_failed")

    async def _reap(self) -> None:
        limits = self.config.limits
        shortest = min(limits.idle_session_seconds, limits.ended_session_seconds)
        period = min(30.0, max(0.1, shortest / 4))
        while True:
            await asyncio.sleep(period)
            try:
                await self.registry.reap_idle()
            except Exception:  # the reaper must survive a bad session
                log.exception("reaper_failed")


def _register(add: object) -> Callable[[object, grpc.aio.Server], None]:
    """A generated add_*_to_server function, typed (the generated _grpc modules have no stubs)."""
    return cast(Callable[[object, grpc.aio.Server], None], add)


async def build_server(
    config: ServerConfig, runner: TestRunner | None = None, *, catalog: Catalog | None = None
) -> MetasreServer:
    """A server for `config`, bound but not started (call from a running event loop).

    `catalog`: the runners and judges its episodes are made with (the process's by default);
    `runner`, when given, replaces the catalogue's visible runner.

    Raises:
        StoreError: the trajectory store (`config.store`) cannot be opened.
        StoreInUseError: another server holds the store (after `config.store_wait_seconds`).
    """
    limits = config.limits
    options = [
        # The server refuses messages over its limit itself (RejectUndecodable), in-band on a
        # stream; gRPC ends only calls whose message is far beyond it.
        ("grpc.max_receive_message_length", limits.max_message_bytes * RECEIVE_SLACK),
        ("grpc.max_send_message_length", limits.max_message_bytes),
        ("grpc.so_reuseport", 0),
    ]
    lock: StoreHold | None = None
    store: Store | None = None
    where = config.store
    if where is not None:
        # Owned before it is opened, and before the port is bound: a server that waits for a
        # handover binds the port the old one has just let go of.
        lock = await asyncio.to_thread(
            hold_store,
            where,
            wait=config.store_wait_seconds,
            on_wait=lambda holder: log.warning(
                "store_in_use_waiting",
                store=describe_store(where),
                holder=holder,
                seconds=config.store_wait_seconds,
            ),
            slot=config.shard.slot if config.shard is not None else None,
        )
        try:
            store = await asyncio.to_thread(open_store, where)
        except BaseException:
            lock.release()
            raise
    interceptors = [RejectUndecodable(limits.max_message_bytes)]
    server = grpc.aio.server(options=options, interceptors=interceptors)
    registry = Registry(
        limits, (catalog or default_catalog()).with_runner(runner), store, config.shard
    )
    _register(control_pb2_grpc.add_ControlServiceServicer_to_server)(
        ControlServicer(registry, config), server
    )
    agents = AgentServicer(registry, limits)
    add_agent_service(agents, server)
    _register(watch_pb2_grpc.add_WatchServiceServicer_to_server)(
        WatchServicer(registry, config), server
    )
    health_servicer = HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    names = (*SERVICE_NAMES, health.SERVICE_NAME, reflection.SERVICE_NAME, REFLECTION_V1)
    reflection.enable_server_reflection(names, server)
    _serve_reflection_v1(names, server)
    address = f"{config.host}:{config.port}"
    if config.tls_cert is not None and config.tls_key is not None:
        credentials = grpc.ssl_server_credentials(
            [(config.tls_key.read_bytes(), config.tls_cert.read_bytes())]
        )
        port = server.add_secure_port(address, credentials)
    else:
        port = server.add_insecure_port(address)
    if port == 0:
        if store is not None:
            store.close()
        if lock is not None:
            lock.release()
        raise OSError(f"could not bind {address}")
    return MetasreServer(config, server, registry, health_servicer, port, agents, lock)


async def serve(
    config: ServerConfig,
    ready: Callable[[MetasreServer], None] | None = None,
    *,
    runner: TestRunner | None = None,
    catalog: Catalog | None = None,
) -> None:
    """Run a server until SIGTERM or SIGINT, then drain and stop.

    Args:
        config: The server's configuration.
        ready: Called once the server serves.
        runner: The sandbox runner (`prepare_sandbox`'s); None: the catalogue's.
        catalog: The runners and judges episodes are made with; None: the process's own.
    """
    server = await build_server(config, runner, catalog=catalog)
    await server.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    if ready is not None:
        ready(server)
    await stop.wait()
    await server.stop()


def server_loop() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """The event loop factory of a server process: uvloop's where it is installed.

    A server's loop turns over tens of times per tool call (each gRPC message, the store's
    commit, every stream that hears of the call); uvloop's loop (libuv, its handles and timers in
    C) spent about 13% less of the server's CPU per call than the standard library's in the
    transport benchmark (bench/RESULTS.md). None: the standard library's (no uvloop on this
    platform, or `METASRE_EVENT_LOOP=asyncio`).
    """
    if os.environ.get(EVENT_LOOP_ENV, "").strip().lower() == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def run_server(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)` on the loop of `server_loop()`."""
    with asyncio.Runner(loop_factory=server_loop()) as runner:
        return runner.run(main)
