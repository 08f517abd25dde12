"""A restricted seat learns only what its view shows, whatever a full-view teammate does.

A property through a real server, on every team family: a full-view teammate reads the logs
of the faults the restricted seat's role does not see, then plays a random sequence of calls
aimed at what that role hides (reads of hidden services, operations on them, hints, the
remedies) and files the report; the restricted seat only listens. No release, migration, file,
flag, queue, commit or log line its view hides may appear in any byte it receives: its stream
(one message at a time or batched), the end of the episode and the grade in it, the unary
CallTool's refusal after the end. The teammate's own stream must hold some of them (else the
test would prove nothing). A hidden service's bare name is structure, not evidence: the team
families' pages say which role owns which services, and the dashboard's dependency column
names them, so it is not looked for (12 examples per family found no leak of the rest).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.protobuf import json_format
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metasre.cli.serving import in_process
from metasre.simulator import Episode, resolve
from metasre.simulator.views import View
from metasre.v1 import agent_pb2, agent_pb2_grpc, common_pb2, control_pb2, control_pb2_grpc

from .conftest import AgentClient, owned_channel, struct
from .test_view_attacks import TEAM_FAMILIES, _flatten, _secrets


def hidden_names(scenario: str, seed: int, view: View) -> set[str]:
    """Every name a seat of `view` does not see, as the seat could find it in a text."""
    spec = resolve(scenario).spec(seed)
    hidden = {s.name for s in spec.services if not view.sees(s.name)}
    # A hidden service's name alone is structure (the page says which role owns which
    # services, the dashboard's dependency column names them): its evidence is what is cut.
    out: set[str] = set()
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
    out: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                out.append(str(k))
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)
        else:
            out.append(str(value))

    walk(json_format.MessageToDict(message))
    return "\n".join(out)


def found(names: set[str], text: str) -> set[str]:
    """The names that occur in `text` as whole names (not inside a longer one)."""
    return {n for n in names if re.search(rf"(?<![\w.-]){re.escape(n)}(?![\w-])", text)}


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
        max_examples=3,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(
        role=st.sampled_from([r.name for r in spec.roles]),
        picks=st.lists(st.integers(min_value=0, max_value=10_000), min_size=1, max_size=8),
        batch=st.booleans(),
    )
    def property(role: str, picks: list[int], batch: bool) -> None:
        view = next(r.view for r in spec.roles if r.name == role)
        names = hidden_names(family, seed, view)
        options = pool(family, seed, view)
        # the hidden faults' logs first: the teammate then holds what the listener must not
        faulty = [b.service for f in spec.faults for b in f.logs if not view.sees(b.service)]
        calls = [("read_logs", {"service": svc, "lines": 200}) for svc in sorted(set(faulty))]
        calls += [options[p % len(options)] for p in picks] + [("submit_report", report)]
        texts, teammates = asyncio.run(listen(address, family, seed, role, calls, batch))
        assert found(names, teammates), "the teammate dug up nothing hidden: a vacuous test"
        leaks = {(where, n) for where, text in texts for n in found(names, text)}
        assert not leaks, sorted(leaks)[:10]

    property()


async def listen(
    address: str, family: str, seed: int, role: str, calls: list[tuple[str, Any]], batch: bool
) -> tuple[list[tuple[str, str]], str]:
    """Play `calls` as a full-view teammate: what the listening seat of `role` received, and
    what the teammate did (all of its stream, as text)."""
    async with owned_channel(address) as channel:
        control = control_pb2_grpc.ControlServiceStub(channel)
        created = await control.CreateSession(
            control_pb2.CreateSessionRequest(
                scenario_id=family,
                seed=seed,
                seats=[
                    common_pb2.SeatConfig(agent_id="listener", role=role),
                    common_pb2.SeatConfig(agent_id="full"),
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
        for tool, args in calls:
            reply = await full.result_or_error(full.tool(tool, args))
            assert reply.WhichOneof("response") == "result", (tool, reply)
        while not any(
            m.WhichOneof("response") == "episode_end" for m in _flatten(listener.received)
        ):
            await listener.receive()
        unary = agent_pb2_grpc.AgentServiceStub(channel).CallTool(
            agent_pb2.CallToolRequest(
                session_id=sid,
                token=tokens["listener"],
                call=agent_pb2.ToolCall(call_id="late", tool="get_alerts", args=struct()),
            )
        )
        texts = []
        try:
            await unary
        except grpc.aio.AioRpcError as exc:  # the episode is over: its refusal is bytes too
            texts.append(("CallTool", f"{exc.details()} {exc.trailing_metadata()}"))
        listener.close()
        full.close()
    for m in listener.received:
        kind = m.WhichOneof("response") or ""
        texts.append((kind, readable(m)))
        texts.append((kind, m.SerializeToString().decode("utf-8", "replace")))
    return texts, "\n".join(readable(m) for m in full.received)
