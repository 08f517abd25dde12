"""Partial observability by role, through a real server: a restricted seat sees nothing its view
hides, by any tool, on its own stream (the page, its results, its teammates' calls), or in git.

Each attack is what a seat that wants the hidden evidence would try: ask for it by name under
every tool that names a service or a system, ask every tool that names none (alerts, graph,
events) and look for it there, read the dashboard, watch a full-view teammate dig it up, or
take a hint. The class is tested, not one spelling: the sweeps run over every tool of the
registry, so a tool added later without its view traits fails here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import pytest

from metasre.agents.client import seat_config
from metasre.agents.errors import ClientError
from metasre.agents.sync import SyncAgent, SyncClient, WireCaller
from metasre.simulator import TOOLS, resolve
from metasre.simulator.views import View

PAY = "meta-sre/payment-bad-deploy-v2"
MIGRATION = "meta-sre/migration-cascade-v3"
LAG = "meta-sre/consumer-lag-v1"
FLAGS = "meta-sre/feature-flag-rollout-v1"


@contextmanager
def seated(
    address: str, scenario: str, seats: list[Mapping[str, Any]], seed: int = 0
) -> Iterator[tuple[SyncClient, str, dict[str, SyncAgent]]]:
    with SyncClient(address) as client:
        session = client.create_session(scenario, seed=seed, seats=seats)
        agents = {
            s["agent_id"]: client.agent(session.id, session.tokens[s["agent_id"]]) for s in seats
        }
        try:
            yield client, session.id, agents
        finally:
            for agent in agents.values():
                agent.close()


def _hidden_log_lines(scenario: str, seed: int, service: str, seen: list[str]) -> list[str]:
    """The fault log lines only `service` writes (none of `seen` writes them too)."""
    spec = resolve(scenario).spec(seed)
    own = {
        line
        for f in spec.faults
        for block in f.logs
        if block.service == service
        for line in block.lines
    }
    others = {
        line
        for f in spec.faults
        for block in f.logs
        if block.service in seen
        for line in block.lines
    }
    # A templated line's stable head is enough to spot it in rendered text.
    return sorted(
        {
            line.split("{")[0].strip()
            for line in own - others
            if len(line.split("{")[0].strip()) > 12
        }
    )


def _everything_seen(reply: Any) -> str:
    # `WireCaller` replies carry no observation; the text and the data are what a tool shows.
    return f"{reply.text}\n{reply.data}"


def _args_for(tool: str, service: str, spec: Any) -> dict[str, Any] | None:
    """Arguments that aim `tool` at `service` (or a queue or flag it owns); None if it owns none."""
    fields = TOOLS[tool].args.model_fields
    args: dict[str, Any] = {}
    owned = {"queue": [q.name for q in spec.queues if q.service == service],
             "flag": [f.name for f in spec.flags if f.service == service]}  # fmt: skip
    for name in TOOLS[tool].service_args:
        if name == "service":
            args["service"] = service
        elif not owned[name]:
            return None
        else:
            args[name] = owned[name][0]
    defaults = {
        "metric": "error_rate", "replicas": 4, "to_version": "v1", "migration": "m1",
        "key": "timeout_ms", "value": 1, "certificate": "tls", "rollout_percent": 0,
        "path": "README.md", "action": "replace", "commit": "HEAD", "suite": "unit",
    }  # fmt: skip
    for name, info in fields.items():
        if name not in args and info.is_required():
            args[name] = defaults[name]
    if tool == "edit_lines":
        args.update(start_line=1, content="# x")
    return args


# -- views are declared and shown -----------------------------------------------------------------


async def test_get_session_and_joined_show_each_seats_view(server):
    def play() -> None:
        with SyncClient(server.address) as client:
            session = client.create_session(
                PAY,
                seats=[
                    {"agent_id": "edge", "view": {"services": ["api-gateway"], "code": False}},
                    {"agent_id": "full"},
                ],
            )
            agent = client.agent(session.id, session.tokens["edge"])
            try:
                assert agent.conn.view == {
                    "services": ["api-gateway"], "code": False, "data": True, "deploys": True,
                }  # fmt: skip
                seats = {s["agent_id"]: s for s in agent.conn.session["seats"]}
                assert seats["edge"]["view"]["services"] == ["api-gateway"]
                assert seats["edge"]["view"]["hide_code"] is True
                assert not seats["full"]["view"].get("services")
            finally:
                agent.close()

    await asyncio.to_thread(play)


async def test_a_restricted_seat_sees_its_teammates_views_only_as_far_as_its_own(server):
    """Joined lists each teammate's services cut to the seat's own view, and says when it cut
    (an emptied list is none, not every service); the owner's GetSession lists them whole."""
    spec = resolve(PAY).spec(0)
    names = [s.name for s in spec.services]
    seats = [
        {"agent_id": "edge", "view": {"services": names[:1]}},
        {"agent_id": "both", "view": {"services": names[:2], "deploys": False}},
        {"agent_id": "other", "view": {"services": names[2:4]}},
        {"agent_id": "full"},
    ]

    def play() -> None:
        with seated(server.address, PAY, seats) as (client, sid, agents):
            told = {s["agent_id"]: s for s in agents["edge"].conn.session["seats"]}
            assert told["edge"]["view"]["services"] == names[:1]
            assert told["both"]["view"]["services"] == names[:1]
            assert told["both"]["view"]["hide_deploys"] is True
            assert told["both"]["view_services_cut"] is True
            assert not told["other"]["view"].get("services")
            assert told["other"]["view_services_cut"] is True
            assert not told["full"]["view"].get("services")
            assert not told["full"]["view_services_cut"]
            assert not told["edge"]["view_services_cut"]
            # A full-view seat is told every view whole, as the owner is.
            whole = {s["agent_id"]: s for s in agents["full"].conn.session["seats"]}
            owner = {s["agent_id"]: s for s in client.get_session(sid)["seats"]}
            for seat in (whole, owner):
                assert seat["other"]["view"]["services"] == names[2:4]
                assert not seat["other"]["view_services_cut"]

    await asyncio.to_thread(play)


async def test_a_view_naming_a_service_the_scenario_lacks_is_refused_at_creation(server):
    def play() -> None:
        with SyncClient(server.address) as client:
            with pytest.raises(ClientError) as caught:
                client.create_session(
                    PAY, seats=[{"agent_id": "a", "view": {"services": ["nope"]}}]
                )
            assert caught.value.code == "INVALID_ARGUMENT"
            assert "nope" in str(caught.value) and "api-gateway" in str(caught.value)
            with pytest.raises(ClientError) as caught:
                client.create_session(
                    PAY, seats=[{"agent_id": "a", "view": {"services": ["Bad Name!"]}}]
                )
            assert caught.value.code == "INVALID_ARGUMENT"

    await asyncio.to_thread(play)


def test_the_sdk_refuses_an_empty_service_list_rather_than_widen_it():
    with pytest.raises(ValueError, match="at least one"):
        seat_config({"agent_id": "a", "view": {"services": []}})
    with pytest.raises(ValueError, match="view takes"):
        seat_config({"agent_id": "a", "view": {"servics": ["x"]}})


# -- asking for hidden things by name -------------------------------------------------------------


@pytest.mark.parametrize("scenario", [LAG, FLAGS])
async def test_every_tool_aimed_at_a_hidden_service_is_refused_without_a_tick(server, scenario):
    """The sweep covers every tool with a service argument, or a queue or flag a service owns
    (consumer-lag has queues, feature-flag-rollout flags): hidden are the root and the owner of
    the first queue or flag."""
    spec = resolve(scenario).spec(0)
    owners = [q.service for q in spec.queues[:1]] + [f.service for f in spec.flags[:1]]
    hidden = [spec.ground_truth.service, *owners]
    seen = [s.name for s in spec.services if s.name not in hidden]
    aimed = [t for t in TOOLS.values() if t.service_args]
    assert len(aimed) >= 15  # the registry's service tools, so a shrinking sweep is noticed

    def play() -> int:
        tried = 0
        with seated(server.address, scenario, [{"agent_id": "a", "view": {"services": seen}}]) as (
            client, sid, agents,
        ):  # fmt: skip
            call = WireCaller(agents["a"])
            for tool in aimed:
                for service in hidden:
                    args = _args_for(tool.name, service, spec)
                    if args is None:
                        continue
                    tried += 1
                    reply = call(tool.name, args)
                    assert not reply.ok and reply.error == "OUTSIDE_VIEW", (tool.name, reply)
                    # The refusal names what the seat sent; the owner of a flag or queue it
                    # named is what its view hides.
                    sent = {k: str(args[k]) for k in tool.service_args if k in args}
                    assert any(v in reply.text for v in sent.values()), (sent, reply.text)
                    if "service" not in sent:
                        assert service not in reply.text, (sent, reply.text)
            assert agents["a"].observation["steps_left"] == spec.step_budget
            assert agents["a"].observation["minute"] == 0
            assert not [e for e in client.get_trajectory(sid) if "applied" in e]
        return tried

    tried = await asyncio.to_thread(play)
    assert tried >= len(aimed) - 1  # only the queue or the flag tool finds nothing to aim at


@pytest.mark.parametrize("system", ["code", "data", "deploys"])
async def test_every_tool_needing_a_hidden_system_is_refused(server, system):
    spec = resolve(PAY).spec(0)
    needing = [t for t in TOOLS.values() if system in t.needs]
    assert needing, system

    def play() -> None:
        with seated(server.address, PAY, [{"agent_id": "a", "view": {system: False}}]) as (
            _c, _s, agents,
        ):  # fmt: skip
            call = WireCaller(agents["a"])
            for tool in needing:
                args = _args_for(tool.name, spec.ground_truth.service, spec) or {}
                reply = call(tool.name, args)
                assert not reply.ok and reply.error == "OUTSIDE_VIEW", (tool.name, reply)
                assert system in reply.text

    await asyncio.to_thread(play)


async def test_code_hidden_means_no_git_history_by_any_git_tool(server):
    def play() -> None:
        with seated(server.address, PAY, [{"agent_id": "a", "view": {"code": False}}]) as (
            _c, _s, agents,
        ):  # fmt: skip
            call = WireCaller(agents["a"])
            for tool, args in [
                ("git_log", {}), ("git_log", {"path": "services"}),
                ("git_show", {"commit": "HEAD"}), ("git_diff", {}),
                ("git_blame", {"path": "README.md"}), ("list_files", {}),
                ("run_tests", {"suite": "unit"}),
            ]:  # fmt: skip
                reply = call(tool, args)
                assert not reply.ok and reply.error == "OUTSIDE_VIEW", (tool, reply)

    await asyncio.to_thread(play)


async def test_hints_are_for_the_full_view_only(server):
    def play() -> None:
        with seated(
            server.address,
            PAY,
            [{"agent_id": "a", "view": {"deploys": False}}, {"agent_id": "b"}],
        ) as (_c, _s, agents):
            reply = WireCaller(agents["a"])("ask_hint", {})
            assert not reply.ok and reply.error == "OUTSIDE_VIEW"
            assert WireCaller(agents["b"])("ask_hint", {}).ok

    await asyncio.to_thread(play)


# -- looking for hidden things in what the view allows --------------------------------------------


@pytest.mark.parametrize("scenario", [PAY, MIGRATION, LAG])
async def test_nothing_the_view_allows_shows_the_hidden_roots_evidence(server, scenario):
    """Every investigate tool the view allows, on every visible service, and the dashboard:
    none shows the hidden root service's alerts, rows, health, log lines or events."""
    spec = resolve(scenario).spec(0)
    root = spec.ground_truth.service
    seen = [s.name for s in spec.services if s.name != root]
    lines = _hidden_log_lines(scenario, 0, root, seen)
    assert lines, "the scenario's root writes log lines of its own"

    def play() -> None:
        with seated(server.address, scenario, [{"agent_id": "a", "view": {"services": seen}}]) as (
            _c, _s, agents,
        ):  # fmt: skip
            agent = agents["a"]
            call = WireCaller(agent)
            first = dict(agent.observation)
            replies = [
                call("get_alerts", {}),
                call("check_dependencies", {}),
                call("get_events", {}),
            ]
            for service in seen:
                replies += [
                    call("read_logs", {"service": service, "lines": 500, "since_minutes": 240}),
                    call("describe_service", {"service": service}),
                    call("get_events", {"service": service}),
                    call("get_config", {"service": service}),
                ]
            shown = "\n".join(_everything_seen(r) for r in replies)
            for line in lines:
                assert line not in shown
            assert root not in [a["service"] for r in replies[:1] for a in r.data.get("alerts", ())]
            assert root not in [row["service"] for row in replies[1].data["services"]]
            assert all(e["service"] != root for e in replies[2].data["events"])
            for observation in (first, agent.observation):
                assert all(a["service"] != root for a in observation.get("alerts", ()))
                assert all(s["name"] != root for s in observation["services"])
                assert not observation.get("terminal")

    await asyncio.to_thread(play)


async def test_without_the_deploy_view_no_release_or_version_shows(server):
    spec = resolve(PAY).spec(0)
    root = spec.ground_truth.service
    bad = next(d.version for d in spec.deployments if d.service == root)

    def play() -> None:
        with seated(server.address, PAY, [{"agent_id": "a", "view": {"deploys": False}}]) as (
            _c, _s, agents,
        ):  # fmt: skip
            agent = agents["a"]
            call = WireCaller(agent)
            logged = call("read_logs", {"service": root, "lines": 500, "since_minutes": 240})
            assert logged.ok and f"deployed {root} {bad}" not in logged.text
            described = call("describe_service", {"service": root})
            events = call("get_events", {})
            deploys = call("get_events", {"kind": "deploy"})
            for reply in (described, events, deploys):
                assert bad not in _everything_seen(reply), reply.text
            assert not described.data["releases"] and not described.data["version"]
            assert not deploys.data["events"]
            assert all(
                not s.get("version") and not s.get("recent_deploy")
                for s in agent.observation["services"]
            )

    await asyncio.to_thread(play)


async def test_without_the_data_view_no_migration_shows(server):
    spec = resolve(MIGRATION).spec(0)
    root = spec.ground_truth.service
    migrations = [m.id for m in spec.migrations if m.service == root]
    assert migrations

    def play() -> None:
        with seated(server.address, MIGRATION, [{"agent_id": "a", "view": {"data": False}}]) as (
            _c, _s, agents,
        ):  # fmt: skip
            call = WireCaller(agents["a"])
            shown = "\n".join(
                _everything_seen(r)
                for r in (
                    call("describe_service", {"service": root}),
                    call("get_events", {}),
                    call("get_events", {"kind": "migration", "service": root}),
                )
            )
            for migration in migrations:
                assert migration not in shown

    await asyncio.to_thread(play)


# -- through the teammates ------------------------------------------------------------------------


async def test_a_full_view_teammates_calls_reach_a_restricted_seat_without_args_or_results(server):
    spec = resolve(PAY).spec(0)
    root = spec.ground_truth.service
    seen = [s.name for s in spec.services if s.name != root]
    lines = _hidden_log_lines(PAY, 0, root, seen)

    def play() -> None:
        with seated(
            server.address,
            PAY,
            [
                {"agent_id": "blind", "view": {"services": seen, "code": False}},
                {"agent_id": "full"},
            ],
        ) as (_c, _s, agents):
            full, blind = WireCaller(agents["full"]), agents["blind"]
            looks = [
                full("read_logs", {"service": root, "lines": 200}),
                full("describe_service", {"service": root}),
                full("git_log", {"limit": 5}),
                full("ask_hint", {}),
            ]
            assert all(r.ok for r in looks)
            assert any(line in looks[0].text for line in lines)
            # The restricted seat's own next call is answered after the teammate's four: its
            # stream has had them by then (a stream delivers in log order).
            WireCaller(blind)("get_alerts", {})
            pushed = blind.conn.inbox.applied
            assert [p["tool"] for p in pushed] == [
                "read_logs",
                "describe_service",
                "git_log",
                "ask_hint",
            ]
            for p in pushed:
                assert p["agent_id"] == "full" and p["ok"]
                assert not p.get("args") and not p.get("text") and not p.get("data"), p
            # The full-view seat, for contrast, gets the restricted seat's call whole.
            WireCaller(agents["full"])("get_alerts", {})
            theirs = agents["full"].conn.inbox.applied
            assert theirs and theirs[-1]["agent_id"] == "blind" and theirs[-1].get("text")

    await asyncio.to_thread(play)


async def test_a_restricted_seats_own_results_carry_the_dashboard_its_view_shows(server):
    spec = resolve(PAY).spec(0)
    root = spec.ground_truth.service

    def play() -> None:
        with seated(
            server.address, PAY, [{"agent_id": "a", "view": {"services": ["api-gateway"]}}]
        ) as (_c, _s, agents):
            result = agents["a"].call("get_alerts", {})
            names = [s["name"] for s in result.observation["services"]]
            assert names == ["api-gateway"]
            assert all(a["service"] == "api-gateway" for a in result.observation.get("alerts", ()))
            # The gateway's row still names what it calls: the graph's shape is no evidence.
            assert root not in [a["service"] for a in result.observation.get("alerts", ())]

    await asyncio.to_thread(play)


async def test_a_scenario_role_gives_its_seat_its_view_unless_the_seat_names_its_own(server):
    """Roles come from the scenario rendered for the seed; a seat's own view overrides."""
    family = next((sid for sid in _families_with_roles()), None)
    if family is None:
        pytest.skip("no family declares roles yet")
    spec = resolve(family).spec(0)
    role = spec.roles[0]

    def play() -> None:
        with SyncClient(server.address) as client:
            listed = {s["id"]: s for s in client.list_scenarios()}
            assert [r["name"] for r in listed[family]["roles"]] == [r.name for r in spec.roles]
            session = client.create_session(
                family,
                seats=[
                    {"agent_id": "r", "role": role.name},
                    {"agent_id": "o", "role": role.name, "view": {"code": False}},
                ],
            )
            r = client.agent(session.id, session.tokens["r"])
            o = client.agent(session.id, session.tokens["o"])
            try:
                want = role.view
                assert (
                    View(
                        services=tuple(r.conn.view["services"])
                        if r.conn.view["services"]
                        else None,
                        code=r.conn.view["code"],
                        data=r.conn.view["data"],
                        deploys=r.conn.view["deploys"],
                    )
                    == want
                )
                assert o.conn.view == {
                    "services": None,
                    "code": False,
                    "data": True,
                    "deploys": True,
                }
            finally:
                r.close()
                o.close()

    await asyncio.to_thread(play)


def _families_with_roles() -> list[str]:
    from metasre.simulator import scenario_ids

    return [sid for sid in scenario_ids() if resolve(sid).spec(0).roles]


async def test_the_page_on_a_restricted_stream_is_cut_to_its_view(server, channel):
    """The raw stream: Joined and EpisodeStarted carry the observation as the view shows it."""
    from metasre.v1 import common_pb2, control_pb2, control_pb2_grpc

    from .conftest import AgentClient

    spec = resolve(PAY).spec(0)
    root = spec.ground_truth.service
    reply = await control_pb2_grpc.ControlServiceStub(channel).CreateSession(
        control_pb2.CreateSessionRequest(
            scenario_id=PAY,
            seats=[
                common_pb2.SeatConfig(
                    agent_id="a", view=common_pb2.View(services=["api-gateway"], hide_deploys=True)
                )
            ],
        )
    )
    agent = AgentClient(channel)
    try:
        joined = await agent.join(reply.session.session_id, reply.tokens[0].join_token)
        started = (await agent.expect("episode_start")).episode_start
        for observation in (joined.observation, started.observation):
            assert [s.name for s in observation.services] == ["api-gateway"]
            assert all(a.service == "api-gateway" for a in observation.alerts)
            assert all(not s.version for s in observation.services)
            assert not observation.terminal
            assert root not in [a.service for a in observation.alerts]
        assert list(joined.view.services) == ["api-gateway"] and joined.view.hide_deploys
    finally:
        agent.close()


def test_a_seats_view_is_stored_with_its_session_and_read_back():
    """A session rebuilt from the store (recovery, another server) keeps each seat's view."""
    from metasre.service.core.session import SeatSpec, SessionSpec
    from metasre.service.store.codec import session_config, spec_from_config

    spec = SessionSpec(
        scenario_id=PAY,
        seed=3,
        seats=(
            SeatSpec("a", "edge", frozenset(), View(services=("api-gateway",), deploys=False)),
            SeatSpec("b", "full"),
        ),
    )
    assert spec_from_config(session_config(spec)) == spec
