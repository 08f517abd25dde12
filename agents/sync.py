"""The blocking client: `SyncClient` and its seats' `SyncAgent`, for scripts and trainers.

Each call waits for its answer; a thread of the client's own runs the async client
(`MetasreClient`) underneath, so a script needs no asyncio:

    with SyncClient("127.0.0.1:50051") as client:
        session = client.create_session("payment-bad-deploy", seed=3, seats=["me"])
        agent = client.agent(session.id, session.tokens["me"])
        result = agent.call("get_alerts")  # a CallResult: result["text"] or result.text
        client.reset_session(session.id)  # the next episode; agent.wait_episode(2)

The README's "Connect an agent from Python" runs a longer example (tested as pasted).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import threading
import time
from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import grpc

from .client import (
    AgentConnection,
    CallResult,
    Inbox,
    MetasreClient,
    SessionHandle,
)
from .errors import ClientError, ConnectionLostError, EpisodeOverError
from .policies.base import ToolReply
from .retry import RetryPolicy

T = TypeVar("T")


SETTLE_SECONDS = 5.0
"""How long closing a client waits for its loop's tasks to end once cancelled."""


async def _settle() -> None:
    """Cancel every other task of the running loop and wait for them to end."""
    me = asyncio.current_task()
    tasks = [t for t in asyncio.all_tasks() if t is not me and not t.done()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


class LoopThread:
    """An asyncio event loop on a daemon thread; blocking callers submit coroutines to it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self.loop.run_forever, name="metasre-client", daemon=True
        )
        self._closing = False
        """Set once `close` has begun: no new call starts, waiting ones are told."""
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run `coro` on the loop and wait for its result.

        Raises:
            ConnectionLostError: the client was closed (by another thread: a command winding
                down on Ctrl-C while a policy thread still plays), before or while it ran.
        """
        if self.loop.is_closed() or self._closing:
            coro.close()
            raise ConnectionLostError("the client is closed")
        try:
            return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)
        except RuntimeError as exc:
            if not self.loop.is_closed():
                raise
            coro.close()
            raise ConnectionLostError("the client is closed") from exc
        except concurrent.futures.CancelledError:
            if not self._closing:
                raise
            raise ConnectionLostError("the client was closed during the call") from None

    def close(self) -> None:
        """Cancel what still runs on the loop (its waiters are told), stop it, join its thread.

        A thread still waiting on a call (a rollout's episode in flight) gets
        ConnectionLostError instead of waiting forever on a loop that no longer runs; a task
        left pending (a stream's reader, gRPC's own status task) would print "Task was
        destroyed but it is pending!" as the loop is collected: each is cancelled and awaited.
        """
        if self.loop.is_closed():
            return
        self._closing = True
        with contextlib.suppress(Exception):  # a loop already stuck: stop it regardless
            asyncio.run_coroutine_threadsafe(_settle(), self.loop).result(SETTLE_SECONDS)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()


class SyncClient:
    """Blocking twin of `MetasreClient`: the same methods, each waiting for its answer.

    Sessions: `create_session` (or `session`, closed when its block exits), `get_session`,
    `list_sessions`, `reset_session`, `close_session`, `get_grade`, `get_trajectory`; the
    catalogue: `list_scenarios`, `list_tools`; seats: `agent` (a joined `SyncAgent`). What they
    return is plain data keyed by the proto's field names. Close it (or use `with`) to stop its
    thread.
    """

    def __init__(
        self,
        target: str,
        *,
        admin_token: str | None = None,
        owner_token: str | None = None,
        reward_mode: str = "DENSE",
        retry: RetryPolicy | None = None,
        credentials: grpc.ChannelCredentials | None = None,
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        self._loop = LoopThread()

        async def make() -> MetasreClient:
            return MetasreClient(
                target,
                admin_token=admin_token,
                owner_token=owner_token,
                reward_mode=reward_mode,
                retry=retry,
                credentials=credentials,
                options=options,
            )

        self.client = self._loop.run(make())

    def __enter__(self) -> SyncClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def create_session(self, scenario_id: str, **kwargs: Any) -> SessionHandle:
        """See `MetasreClient.create_session`."""
        return self._loop.run(self.client.create_session(scenario_id, **kwargs))

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run a coroutine of `self.client` (or of its agents) on the client's loop and wait.

        The blocking adapters (Gymnasium, PettingZoo) drive several seats at once this way.
        """
        return self._loop.run(coro, timeout)

    def get_session(self, session_id: str) -> dict[str, Any]:
        """See `MetasreClient.get_session`."""
        return self._loop.run(self.client.get_session(session_id))

    @contextlib.contextmanager
    def session(self, scenario_id: str, **kwargs: Any) -> Iterator[SessionHandle]:
        """See `MetasreClient.session`: a session for the block, closed when it exits."""
        handle = self.create_session(scenario_id, **kwargs)
        try:
            yield handle
        finally:
            self._loop.run(self.client._close_quietly(handle.id))

    def list_sessions(self) -> list[dict[str, Any]]:
        """See `MetasreClient.list_sessions`."""
        return self._loop.run(self.client.list_sessions())

    def get_grade(self, session_id: str) -> dict[str, Any]:
        """See `MetasreClient.get_grade`."""
        return self._loop.run(self.client.get_grade(session_id))

    def get_trajectory(self, session_id: str, episode: int = 0) -> list[dict[str, Any]]:
        """See `MetasreClient.get_trajectory`."""
        return self._loop.run(self.client.get_trajectory(session_id, episode))

    def list_scenarios(self) -> list[dict[str, Any]]:
        """See `MetasreClient.list_scenarios`."""
        return self._loop.run(self.client.list_scenarios())

    def list_tools(self) -> list[dict[str, Any]]:
        """See `MetasreClient.list_tools`."""
        return self._loop.run(self.client.list_tools())

    def reset_session(self, session_id: str, seed: int | None = None) -> dict[str, Any]:
        """See `MetasreClient.reset_session`."""
        return self._loop.run(self.client.reset_session(session_id, seed))

    def close_session(self, session_id: str) -> None:
        """See `MetasreClient.close_session`."""
        self._loop.run(self.client.close_session(session_id))

    def agent(self, session_id: str, join_token: str) -> SyncAgent:
        """A joined agent connection for one seat."""

        async def joined() -> AgentConnection:
            # Made on the loop's thread: a fleet's session may need a channel to its shard,
            # and a grpc.aio channel belongs to the loop of the thread that makes it.
            conn = self.client.agent(session_id, join_token)
            await conn.join()
            return conn

        return SyncAgent(self._loop, self._loop.run(joined()))

    def close(self) -> None:
        """Close the channel and stop the loop thread."""
        self._loop.run(self.client.close())
        self._loop.close()


class SyncAgent:
    """Blocking twin of `AgentConnection`: one joined seat.

    `call` a tool (a `CallResult`), read the latest `observation` and the `inbox` of what the
    server pushed (teammates' calls and messages, rewards, turns, the episode's end), follow a
    reset with `wait_episode`, and `close`.
    """

    def __init__(self, loop: LoopThread, conn: AgentConnection) -> None:
        self._loop = loop
        self.conn = conn

    @property
    def observation(self) -> dict[str, Any]:
        """The latest observation the server sent."""
        return self.conn.observation

    def call(self, tool: str, args: Mapping[str, Any] | None = None) -> CallResult:
        """See `AgentConnection.call`."""
        return self._loop.run(self.conn.call(tool, args))

    def wait_news(self, seen: int, timeout: float | None = None) -> int:
        """Block until more than `seen` pushes have arrived; returns the count."""
        return self._loop.run(self.conn.next_news(seen, timeout))

    @property
    def episode(self) -> int:
        """The episode the seat is in (see `AgentConnection.episode`)."""
        return self.conn.episode

    def wait_episode(self, episode: int, timeout: float | None = None) -> bool:
        """Block until the seat is in `episode` (after a reset); False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            seen = self.news  # before the look, so that nothing arriving after it is missed
            if self.conn.episode >= episode:
                return True
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            self.wait_news(seen, left)

    @property
    def news(self) -> int:
        """How many pushes have arrived so far."""
        return self.conn.news

    def messages(self) -> Sequence[dict[str, Any]]:
        """Teammates' messages received so far."""
        return list(self.conn.inbox.messages)

    @property
    def inbox(self) -> Inbox:
        """What the server pushed besides this seat's own results.

        Teammates' applied calls, messages, rewards, turns, and `episode_end` (the grade) once
        the episode is over.
        """
        return self.conn.inbox

    def close(self) -> None:
        """Hang up (nothing to do once the client itself is closed)."""
        if not self._loop.loop.is_closed():
            with contextlib.suppress(ConnectionLostError):
                self._loop.run(self.conn.close())


Filler = Callable[[], tuple[str, dict[str, Any]] | None]
"""What a seat does with a turn it holds while it waits for a teammate: a look it will want
anyway, or None to let the turn go by."""


class WireCaller:
    """A TeamCaller over the wire: refusals come back as replies, never as exceptions.

    It takes turns as the session's policy says. Under ROUND_ROBIN a call waits until the seat
    holds the turn; under SIMULTANEOUS, until a round opens that the seat has not called in
    yet; under FREE_FOR_ALL it goes at once. While a seat waits for a teammate's message
    (`wait_message`) with a `filler`, it spends the turns it holds on the filler's looks
    instead of stalling the round or letting the turn time out; a later call of the same look
    gets the filler's reply back without a second call.
    """

    def __init__(self, agent: SyncAgent) -> None:
        self.agent = agent
        self.calls = 0
        self._turns_used = -1
        """How many TurnGranted this seat had seen when it last called (ROUND_ROBIN)."""
        self._round_used = 0
        """The latest round this seat had seen open when it last called (SIMULTANEOUS)."""
        self._looked: dict[str, ToolReply] = {}

    @property
    def turn_policy(self) -> str:
        """FREE_FOR_ALL, ROUND_ROBIN or SIMULTANEOUS."""
        return str(self.agent.conn.session.get("turn_policy", "")).removeprefix("TURN_POLICY_")

    def _holds_turn(self) -> bool:
        conn = self.agent.conn
        turns = conn.inbox.turns
        policy = self.turn_policy
        if policy == "ROUND_ROBIN":
            holder = turns[-1].get("agent_id") if turns else conn.session.get("turn_agent_id")
            return holder == conn.agent_id and len(turns) > self._turns_used
        if policy == "SIMULTANEOUS":
            # A seat joins into an open round; later rounds are announced on its stream.
            latest = max((int(t.get("round", 0)) for t in turns), default=1)
            return latest > self._round_used
        return True

    def _over(self) -> bool:
        conn = self.agent.conn
        return conn.inbox.episode_end is not None or conn.lost is not None

    def _await_turn(self, deadline: float) -> bool:
        """Block until this seat may call; False if the episode ends or `deadline` passes."""
        while True:
            seen = self.agent.news
            if self._holds_turn():
                return True
            left = deadline - time.monotonic()
            if left <= 0 or self._over():
                return False
            self.agent.wait_news(seen, left)

    def __call__(self, tool: str, args: Mapping[str, Any]) -> ToolReply:
        """Apply one call as this seat's agent, in its turn."""
        known = self._looked.pop(_look_key(tool, args), None)
        if known is not None:
            return known
        return self._send(tool, args)

    def _send(self, tool: str, args: Mapping[str, Any]) -> ToolReply:
        deadline = time.monotonic() + TURN_WAIT_SECONDS
        while True:
            self._await_turn(deadline)
            conn = self.agent.conn
            used = self._turns_used, self._round_used
            self._turns_used = len(conn.inbox.turns)
            self._round_used = max((int(t.get("round", 0)) for t in conn.inbox.turns), default=1)
            self.calls += 1
            try:
                r = self.agent.call(tool, args)
            except EpisodeOverError as exc:
                return ToolReply(False, str(exc), {}, True, exc.reason)
            except ClientError as exc:
                # The turn timed out between the look at it and the call (a slow or loaded
                # machine): the call was not applied, so wait for the next turn and send again.
                if exc.reason == "NOT_YOUR_TURN" and time.monotonic() < deadline:
                    continue
                # Any other refusal (outside the seat's view, a tool its role may not use, bad
                # arguments) comes before the call is admitted: the turn or round is still the
                # seat's to use.
                if exc.reason != "NOT_YOUR_TURN":
                    self._turns_used, self._round_used = used
                return ToolReply(
                    False,
                    str(exc),
                    {"violations": list(exc.violations)},
                    False,
                    exc.reason or exc.code,
                )
            return ToolReply(r.ok, r.text, r.data, r.done, r.error_code or None)

    @property
    def observation(self) -> Mapping[str, Any]:
        """The latest observation the seat received."""
        return self.agent.observation

    @property
    def over(self) -> bool:
        """Whether the episode or the seat's stream has ended."""
        return self._over()

    def inbox(self) -> Sequence[Mapping[str, Any]]:
        """Teammates' messages received so far, in the order the session applied them."""
        return self.agent.messages()

    def wait_inbox(self, count: int, timeout: float, filler: Filler | None = None) -> bool:
        """Wait until more than `count` messages have arrived; False on timeout or the end.

        Turns the seat holds meanwhile go to `filler`'s looks, as in `wait_message`.
        """
        messages = self.agent.conn.inbox.messages
        return self._wait(lambda: len(messages) > count, timeout, filler)

    def wait_message(
        self,
        predicate: Callable[[Mapping[str, Any]], bool],
        timeout: float,
        filler: Filler | None = None,
    ) -> Mapping[str, Any] | None:
        """The first received teammate message matching `predicate`, waiting up to `timeout`.

        Under ROUND_ROBIN and SIMULTANEOUS, each turn the seat holds meanwhile goes to the
        `filler`'s next look (remembered for the seat's own later call of it).
        """
        found: list[Mapping[str, Any]] = []

        def matched() -> bool:
            found[:] = [m for m in self.agent.messages() if predicate(m)][:1]
            return bool(found)

        return found[0] if self._wait(matched, timeout, filler) else None

    def _wait(self, ready: Callable[[], bool], timeout: float, filler: Filler | None) -> bool:
        deadline = time.monotonic() + timeout
        while True:
            seen = self.agent.news
            if ready():
                return True
            left = deadline - time.monotonic()
            # An ended episode or stream sends nothing more: waiting out the timeout would
            # only delay the end (a closed session's team would linger for a minute).
            if left <= 0 or self._over():
                return False
            if filler is not None and self.turn_policy != "FREE_FOR_ALL" and self._holds_turn():
                look = filler()
                if look is not None:
                    tool, args = look
                    reply = self._send(tool, args)
                    if reply.ok:
                        self._looked[_look_key(tool, args)] = reply
                    continue
            self.agent.wait_news(seen, left)


TURN_WAIT_SECONDS = 120.0
"""How long a call waits for its seat's turn before it is sent anyway (and refused)."""


def _look_key(tool: str, args: Mapping[str, Any]) -> str:
    return tool + json.dumps(dict(args), sort_keys=True, default=str)


__all__ = [
    "Filler",
    "LoopThread",
    "SyncAgent",
    "SyncClient",
    "WireCaller",
]
