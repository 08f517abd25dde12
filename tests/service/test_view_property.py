"""A restricted seat learns only what its view shows, whatever a full-view teammate does.

A property through a real server, on every team family and each of its roles: a full-view
teammate reads the logs of the faults the restricted seat's role does not see, then plays a
random sequence of calls aimed at what that role hides (reads of hidden services, operations on
them, the remedies) and files the report, while the restricted seat makes random calls of its
own by the unary CallTool (looks its view allows, calls it refuses). No name its view hides may
appear in any byte it receives: a hidden service's name, its releases, migrations, flags,
queues, log lines, the code's files and commits. It is looked for in its stream (one message at
a time or batched: Joined with its session, the starts, teammates' calls, its rewards, the end
of the episode and its grade), in its unary replies and in their refusals, in and after the
episode. The teammate's own stream must hold some hidden evidence, else the test would prove
nothing.

Two kinds of name are the seat's own to see: a hidden service that one of its services calls
(the dashboard's dependency column names it, as that service's configuration does), and what
its own services' evidence names in its own results, as the same calls show it playing alone.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.protobuf import json_format
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from metasre.cli.serving import in_process
from metasre.simulator import Episode, resolve
from metasre.simulator.errors import InvalidToolCallError
from metasre.simulator.tools import get_tool
from metasre.simulator.views import View, owners_of, refusal
from metasre.v1 import agent_pb2, agent_pb2_grpc, common_pb2, control_pb2, control_pb2_grpc

from .conftest import AgentClient, owned_channel, struct
from .test_view_attacks import TEAM_FAMILIES, _flatten, _secrets


def hidden_names(scenario: str, seed: int, view: View) -> set[str]:
    """Every name a seat of `view` does not see, as the seat could find it in a text."""
    spec = resolve(scenario).spec(seed)
    hidden = {s.name for s in spec.services if not view.sees(s.name)}
    out = set(hidden)
    for d in spec.deployments:
        if not view.deploys or d.service in hidden:
            out |= {f"{d.service}@{d.version}", f"{d.service} {d.version}"}
    for m in spec.migrations:
        if not view.data or m.service in hidden:
            out.add(m.id)
    out |= {f.name for f in spec.flags if f.service in hidden}
    out |= {q.name for q in spec.queues if q.service in hidden}
    # and its evidence: its log lines (as `test_view_attacks` finds them)
    out |= {line for line, why in _secrets(spec, view).items() if "log line" in why}
    if not view.code:
        episode = Episode.make(scenario, seed)
        out |= {p for p in episode.workspace.base.files if "/" in p}
        out |= {c.sha[:12] for c in episode.workspace.log(limit=1000)}
    return out


def readable(message: Any) -> str:
    """Every string a message holds (keys too), one a line, as a client decodes them."""
    return "\n".join(_strings(json_format.MessageToDict(message)))


def found(names: set[str], text: str) -> set[str]:
    """The names that occur in `text` as whole names (not inside a longer one)."""
    return {n for n in names if re.search(rf"(?<![\w.-]){re.escape(n)}(?![\w-])", text)}


def own_calls(scenario: str, seed: int, view: View) -> list[tuple[str, dict[str, Any]]]:
    """Calls the restricted seat makes itself: looks its view allows, and calls it refuses
    (names nobody owns, tools that need what it does not see, a hint)."""
    spec = resolve(scenario).spec(seed)
    seen = [s.name for s in spec.services if view.sees(s.name)]
    calls: list[tuple[str, dict[str, Any]]] = [
        ("get_alerts", {}),
        ("check_dependencies", {}),
        ("get_events", {}),
        ("get_events", {"kind": "deploy"}),
        ("get_events", {"kind": "migration"}),
        ("read_logs", {"service": "nope"}),
        ("set_feature_flag", {"flag": "nope", "rollout_percent": 0}),
        ("skip_message", {"queue": "nope"}),
        ("ask_hint", {}),
        ("list_files", {}),
        ("git_log", {}),
        ("rollback_migration", {"service": seen[0]}),
        ("rollback_deployment", {"service": seen[0]}),
    ]
    for name in seen[:3]:
        calls += [
            ("describe_service", {"service": name}),
            ("check_dependencies", {"service": name}),
            ("query_metrics", {"service": name, "metric": "error_rate"}),
            ("get_config", {"service": name}),
        ]
    return calls


def edges(scenario: str, seed: int, view: View) -> set[str]:
    """The services that the services `view` sees call (its dependency column names them)."""
    rows = Episode.make(scenario, seed).observation().services
    return {d for r in rows if view.sees(r.name) for d in r.depends_on}


def solo(scenario: str, seed: int, view: View, calls: list[tuple[str, dict[str, Any]]]) -> str:
    """What `calls` show a seat of `view` playing alone, in-process: its own services'
    evidence, whatever names it carries."""
    episode = Episode.make(scenario, seed)
    owners = owners_of(episode.instance.spec)
    out = []
    for tool, args in calls:
        try:
            if refusal(view, get_tool(tool), args, owners):
                continue
            step = episode.apply("listener", tool, args, view)
        except InvalidToolCallError:
            continue
        out += [step.output.text, *_strings(step.output.data)]
    return "\n".join(out)


def _strings(value: Any) -> Iterator[str]:
    """Every string in plain data, keys too, as a client decodes them."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)
    else:
        yield str(value)


def pool(scenario: str, seed: int, view: View) -> list[tuple[str, dict[str, Any]]]:
    """Calls a full-view teammate could make about what `view` hides."""
    spec = resolve(scenario).spec(seed)
    calls: list[tuple[str, dict[str, Any]]] = [("ask_hint", {}), ("get_events", {})]
    for s in spec.services:
        if view.sees(s.name):
            continue
        calls += [
            ("read_logs", {"service": s.name, "lines": 200}),
            ("describe_service", {"service": s.name}),
            ("get_config", {"service": s.name}),
            ("restart_service", {"service": s.name}),
            ("scale_service", {"service": s.name, "replicas": 5}),
            ("rollback_deployment", {"service": s.name}),
        ]
    calls += [(s.tool, dict(s.args)) for s in spec.solution if s.tool != "submit_report"]
    return calls


@pytest.fixture(scope="module")
def address() -> Iterator[str]:
    with in_process(None) as served:
        yield served


@pytest.mark.parametrize("family", TEAM_FAMILIES)
def test_a_listening_restricted_seat_hears_no_name_its_view_hides(
    address: str, family: str
) -> None:
    seed = 1
    spec = resolve(family).spec(seed)
    report = next(dict(s.args) for s in spec.solution if s.tool == "submit_report")

    @settings(
        max_examples=5,
        deadline=None,
        derandomize=True,
        # a failing example is printed as found: shrinking replays whole episodes for minutes
        phases=(Phase.explicit, Phase.generate),
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(
        role=st.sampled_from([r.name for r in spec.roles]),
        picks=st.lists(st.integers(min_value=0, max_value=10_000), min_size=1, max_size=8),
        mine=st.lists(
            st.tuples(st.integers(min_value=0, max_value=100), st.integers(0, 10_000)),
            max_size=5,
        ),
        batch=st.booleans(),
    )
    def property(role: str, picks: list[int], mine: list[tuple[int, int]], batch: bool) -> None:
        view = next(r.view for r in spec.roles if r.name == role)
        names = hidden_names(family, seed, view)
        services = {s.name for s in spec.services if not view.sees(s.name)}
        options = pool(family, seed, view)
        # the hidden faults' logs first: the teammate then holds what the listener must not
        faulty = [b.service for f in spec.faults for b in f.logs if not view.sees(b.service)]
        calls = [("read_logs", {"service": svc, "lines": 200}) for svc in sorted(set(faulty))]
        calls += [options[p % len(options)] for p in picks] + [("submit_report", report)]
        looks = own_calls(family, seed, view)
        # the listener's own unary calls, each before one of the teammate's (not after the end)
        own: dict[int, list[tuple[str, dict[str, Any]]]] = {}
        for at, pick in mine:
            own.setdefault(at % (len(calls) - 1), []).append(looks[pick % len(looks)])
        texts, teammates = asyncio.run(listen(address, family, seed, role, calls, batch, own))
        assert found(names - services, teammates), "the teammate dug up nothing: a vacuous test"
        # What the seat's own services say of their peers (a host in a config) is theirs.
        alone = found(names, solo(family, seed, view, [c for i in sorted(own) for c in own[i]]))
        called = edges(family, seed, view)
        leaks = {
            (where, n)
            for where, text in texts
            for n in found(names, text)
            if n not in called
            and not (n in alone and where.split(" ")[0] in ("result", "CallTool"))
        }
        assert not leaks, sorted(leaks)[:10]

    property()


async def listen(
    address: str,
    family: str,
    seed: int,
    role: str,
    calls: list[tuple[str, Any]],
    batch: bool,
    own: dict[int, list[tuple[str, dict[str, Any]]]] | None = None,
) -> tuple[list[tuple[str, str]], str]:
    """Play `calls` as a full-view teammate: what the listening seat of `role` received, and
    what the teammate did (all of its stream, as text).

    `own`: the listener's own calls by the unary CallTool, by the index of the teammate's call
    they go before; their replies and refusals count as received.
    """
    texts: list[tuple[str, str]] = []
    async with owned_channel(address) as channel:
        control = control_pb2_grpc.ControlServiceStub(channel)
        created = await control.CreateSession(
            control_pb2.CreateSessionRequest(
                scenario_id=family,
                seed=seed,
                # the other roles seated (idle): the listener's session lists their views
                seats=[
                    common_pb2.SeatConfig(agent_id="listener", role=role),
                    common_pb2.SeatConfig(agent_id="full"),
                    *(
                        common_pb2.SeatConfig(agent_id=r.name, role=r.name)
                        for r in resolve(family).spec(seed).roles
                        if r.name != role
                    ),
                ],
            )
        )
        sid = created.session.session_id
        tokens = {t.agent_id: t.join_token for t in created.tokens}
        listener, full = AgentClient(channel), AgentClient(channel)
        listener.send(
            agent_pb2.ConnectRequest(
                join=agent_pb2.JoinSeat(
                    session_id=sid,
                    join_token=tokens["listener"],
                    options=agent_pb2.StreamOptions(batch_events=batch),
                )
            )
        )
        await listener.expect("joined")
        await full.join(sid, tokens["full"])
        stub = agent_pb2_grpc.AgentServiceStub(channel)

        async def call_tool(call_id: str, tool: str, args: dict[str, Any]) -> None:
            request = agent_pb2.CallToolRequest(
                session_id=sid,
                token=tokens["listener"],
                call=agent_pb2.ToolCall(call_id=call_id, tool=tool, args=struct(args)),
            )
            try:
                reply = await stub.CallTool(request)
            except grpc.aio.AioRpcError as exc:  # a refusal is bytes it receives too
                texts.append((f"CallTool {tool} refused", _status_text(exc)))
                return
            texts.append((f"CallTool {tool}", readable(reply)))
            texts.append((f"CallTool {tool}", _decoded(reply.SerializeToString())))

        for i, (tool, args) in enumerate(calls):
            for k, (own_tool, own_args) in enumerate((own or {}).get(i, ())):
                await call_tool(f"own-{i}-{k}", own_tool, own_args)
            # A client that names its calls after their arguments (a hidden service's name)
            call_id = f"{i}-{tool}-" + "-".join(str(v) for v in args.values() if isinstance(v, str))
            reply = await full.result_or_error(full.tool(tool, args, call_id=call_id[:128]))
            assert reply.WhichOneof("response") == "result", (tool, reply)
        while not any(
            m.WhichOneof("response") == "episode_end" for m in _flatten(listener.received)
        ):
            await listener.receive()
        await call_tool("late", "get_alerts", {})  # refused: the episode is over
        listener.close()
        full.close()
    # A batch's events are judged one by one (its bytes are theirs, concatenated).
    for m in _flatten(listener.received):
        kind = m.WhichOneof("response") or ""
        texts.append((kind, readable(m)))
        texts.append((kind, _decoded(m.SerializeToString())))
    return texts, "\n".join(readable(m) for m in full.received)


def _decoded(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _status_text(exc: grpc.aio.AioRpcError) -> str:
    """A refusal's every byte: its message, and its trailing metadata (the status details)."""
    out = [exc.details() or ""]
    for key, value in exc.trailing_metadata() or ():
        out.append(f"{key} {_decoded(value) if isinstance(value, bytes) else value}")
    return "\n".join(out)
