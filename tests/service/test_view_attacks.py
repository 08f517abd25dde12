"""A restricted seat that wants what its view hides, through the public path (a real server).

Red-team sweeps beyond `test_views.py`: what an agent in a restricted seat would try when its
view refuses it the evidence. Each attack is a class, tried in several spellings: the error
paths of every tool the view allows (unknown names, case and whitespace tricks), the settings
tools' listings, the operations' result texts, every way its own stream can carry a
teammate's work (one message at a time, batched, replayed on resume, after a reset, the unary
CallTool), and the scenario roles of the four team families with their own tool lists.

What a hidden service's name alone tells is structure (the dependency graph shows it anyway);
what these tests look for is its evidence: its log lines, its releases and migrations, its
flags and queues, its alerts and rows, what a teammate's call found.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Mapping
from typing import Any

import pytest
from google.protobuf import json_format

from metasre.agents.sync import SyncClient, WireCaller
from metasre.simulator import TOOLS, resolve
from metasre.simulator.grader import MEASURES
from metasre.v1 import agent_pb2, agent_pb2_grpc, common_pb2, control_pb2, control_pb2_grpc

from .conftest import AgentClient, struct
from .test_views import _args_for, _hidden_log_lines, seated

PAY = "meta-sre/payment-bad-deploy-v2"
LAG = "meta-sre/consumer-lag-v1"
FLAGS = "meta-sre/feature-flag-rollout-v1"
TEAM_FAMILIES = (
    "meta-sre/twin-faults-v2",
    "meta-sre/parallel-sla-v2",
    "meta-sre/split-evidence-v2",
    "meta-sre/schema-release-v2",
)


def _shown(reply: Any) -> str:
    return f"{reply.text}\n{json.dumps(reply.data, default=str)}"


def _spellings(name: str) -> list[str]:
    """Names a careless or a scheming agent might send for `name`."""
    return [
        name.upper(),
        name.capitalize(),
        f" {name}",
        f"{name} ",
        f"{name}\n",
        name.replace("-", "_"),
        name.replace(".", "-"),
        name[:-1],
        f"{name}x",
        "",
        "*",
    ]


# -- error paths: a listing of what exists shows only what the view shows -------------------------


@pytest.mark.parametrize(
    ("scenario", "tool", "arg", "extra"),
    [
        (FLAGS, "set_feature_flag", "flag", {"rollout_percent": 0}),
        (LAG, "skip_message", "queue", {}),
    ],
)
async def test_an_unknown_flag_or_queue_lists_none_a_hidden_service_owns(
    server, scenario, tool, arg, extra
):
    """The refusal leaves a name nobody owns to the tool, which answers with what exists: that
    listing must not name the flags or queues of services the seat does not see (the flag of
    feature-flag-rollout's root is the incident's location)."""
    spec = resolve(scenario).spec(0)
    root = spec.ground_truth.service
    owned = [(f.name, f.service) for f in spec.flags] + [(q.name, q.service) for q in spec.queues]
    hidden_names = [n for n, s in owned if s == root]
    if not hidden_names:
        # the root owns no queue here: hide the owner of the first instead
        root = owned[0][1]
        hidden_names = [n for n, s in owned if s == root]
    seen = [s.name for s in spec.services if s.name != root]
    visible_names = [n for n, s in owned if s != root]
    assert hidden_names and visible_names

    def play() -> None:
        with seated(server.address, scenario, [{"agent_id": "a", "view": {"services": seen}}]) as (
            _c, _s, agents,
        ):  # fmt: skip
            call = WireCaller(agents["a"])
            # An unknown name costs a step: the first hidden name's spellings stay in budget.
            for spelling in ["nope", *_spellings(hidden_names[0]), *hidden_names]:
                reply = call(tool, {arg: spelling, **extra})
                assert not reply.ok and reply.error in ("OUTSIDE_VIEW", f"unknown_{arg}"), reply
                # The seat's own spelling comes back in the error; what follows it is the list.
                listed = reply.text.partition(" are: ")[2] + json.dumps(reply.data.get(f"{arg}s"))
                for name in hidden_names:
                    assert name not in listed, (spelling, name, reply.text)
            # What the seat sees is still listed: the cut is by owner, not of the whole list.
            listed = _shown(call(tool, {arg: "nope", **extra}))
            assert all(n in listed for n in visible_names)

    await asyncio.to_thread(play)


@pytest.mark.parametrize("scenario", [PAY, FLAGS, LAG])
async def test_case_and_whitespace_tricks_on_a_hidden_service_reach_nothing(server, scenario):
    """Every tool naming a service, aimed at the hidden root spelled another way: refused as
    outside the view or as unknown, and neither answer carries the root's evidence."""
    spec = resolve(scenario).spec(0)
    root = spec.ground_truth.service
    seen = [s.name for s in spec.services if s.name != root]
    lines = _hidden_log_lines(scenario, 0, root, seen)
    versions = [d.version for d in spec.deployments if d.service == root]
    aimed = [t for t in TOOLS.values() if "service" in t.service_args]

    def play() -> None:
        with seated(server.address, scenario, [{"agent_id": "a", "view": {"services": seen}}]) as (
            client, sid, agents,
        ):  # fmt: skip
            call = WireCaller(agents["a"])
            for tool in aimed:
                base = _args_for(tool.name, root, spec)
                if base is None:
                    continue
                for spelling in _spellings(root):
                    reply = call(tool.name, {**base, "service": spelling})
                    assert not reply.ok, (tool.name, spelling, reply)
                    shown = _shown(reply)
                    assert not any(line in shown for line in lines), (tool.name, spelling)
                    assert not any(f"{root} {v}" in shown for v in versions), (tool.name, shown)
            # None of them reached the world.
            assert agents["a"].observation["minute"] == 0
            assert not [e for e in client.get_trajectory(sid) if "applied" in e]

    await asyncio.to_thread(play)


# -- the team families: every tool a role may use, on everything it sees ------------------------


def _secrets(spec: Any, view: Any) -> dict[str, str]:
    """Strings that would tell a seat of `view` what it does not see, and why each is secret."""
    out: dict[str, str] = {}
    for d in spec.deployments:
        if not view.deploys or not view.sees(d.service):
            out[f"{d.service} {d.version}"] = f"release {d.service}@{d.version}"
    for m in spec.migrations:
        if not view.data or not view.sees(m.service):
            out[m.id] = f"migration {m.id} of {m.service}"
    for f in spec.faults:
        for block in f.logs:
            if view.sees(block.service):
                continue
            for line in block.lines:
                head = line.split("{")[0].strip()
                if len(head) > 15:
                    out[head] = f"a log line of {block.service}"
    for f in spec.flags:
        if not view.sees(f.service):
            out[f.name] = f"flag of {f.service}"
    # A line the seat's own services log too is no secret.
    for f in spec.faults:
        for block in f.logs:
            if view.sees(block.service):
                for line in block.lines:
                    out.pop(line.split("{")[0].strip(), None)
    return out


def _role_calls(spec: Any, view: Any) -> list[tuple[str, dict[str, Any]]]:
    seen = [s.name for s in spec.services if view.sees(s.name)]
    calls: list[tuple[str, dict[str, Any]]] = [
        ("get_alerts", {}),
        ("check_dependencies", {}),
        ("get_events", {}),
        ("get_events", {"kind": "deploy"}),
        ("get_events", {"kind": "migration"}),
        ("set_feature_flag", {"flag": "nope", "rollout_percent": 0}),
        ("skip_message", {"queue": "nope"}),
        ("read_logs", {"service": "nope"}),
    ]
    for s in seen:
        calls += [
            ("read_logs", {"service": s, "lines": 500, "since_minutes": 240}),
            ("describe_service", {"service": s}),
            ("get_config", {"service": s}),
            ("get_events", {"service": s}),
            ("check_dependencies", {"service": s}),
            ("query_metrics", {"service": s, "metric": "error_rate"}),
            ("set_config", {"service": s, "key": "nope", "value": 1}),
            ("renew_certificate", {"service": s, "certificate": "nope"}),
            ("rollback_deployment", {"service": s, "to_version": "nope"}),
            ("rollback_migration", {"service": s, "migration": "nope"}),
        ]
    return calls


@pytest.mark.parametrize("family", TEAM_FAMILIES)
async def test_a_team_familys_role_seat_finds_nothing_its_view_hides(server, family):
    """Each role of the family, seated by its role name: every call of the sweep the seat may
    make (reads of everything it sees, error paths, harmless refused operations), and the page.
    No release, migration, flag or log line its view hides shows anywhere."""
    seed = 1
    spec = resolve(family).spec(seed)
    assert spec.roles

    def play() -> int:
        made = 0
        for role in spec.roles:
            secrets = _secrets(spec, role.view)
            assert secrets, role.name  # every role of a team family misses something
            calls = [
                c for c in _role_calls(spec, role.view) if not role.tools or c[0] in role.tools
            ]
            # A session per step budget's worth of calls: each call after the first is seen
            # by a fresh episode as often as not, and every one is made.
            per = spec.step_budget - 1
            for start in range(0, len(calls), per):
                with seated(
                    server.address, family, [{"agent_id": "r", "role": role.name}], seed=seed
                ) as (_c, _s, agents):
                    agent = agents["r"]
                    call = WireCaller(agent)
                    shown = [json.dumps(agent.observation, default=str)]
                    for tool, args in calls[start : start + per]:
                        reply = call(tool, args)
                        assert reply.error != "EPISODE_ENDED", reply
                        if reply.error == "OUTSIDE_VIEW":
                            continue
                        made += 1
                        shown.append(f"{tool} {args}: {_shown(reply)}")
                    shown.append(json.dumps(agent.observation, default=str))
                    text = "\n".join(shown)
                    leaks = {why for secret, why in secrets.items() if secret in text}
                    assert not leaks, (role.name, sorted(leaks))
        return made

    made = await asyncio.to_thread(play)
    assert made >= 20


# -- the seat's own stream: every way a teammate's work could reach it ---------------------------


def _flatten(messages: Iterable[agent_pb2.ConnectResponse]) -> list[agent_pb2.ConnectResponse]:
    out: list[agent_pb2.ConnectResponse] = []
    for m in messages:
        if m.WhichOneof("response") == "batch":
            out += _flatten(m.batch.events)
        else:
            out.append(m)
    return out


def _check_stream(
    messages: Iterable[agent_pb2.ConnectResponse], me: str, root: str, secrets: Mapping[str, str]
) -> dict[str, int]:
    """What a restricted seat's stream carried, checked: no teammate's arguments, text or data,
    no row or alert of the hidden root, nothing secret anywhere. Returns counts by kind."""
    kinds: dict[str, int] = {}
    for m in _flatten(messages):
        kind = m.WhichOneof("response") or ""
        kinds[kind] = kinds.get(kind, 0) + 1
        text = json_format.MessageToJson(m)
        # data_json is bytes, base64 in that text: read it as a client of the JSON form does.
        if kind in ("applied", "result"):
            text += getattr(m, kind).data_json.decode()
        leaks = {why for secret, why in secrets.items() if secret in text}
        assert not leaks, (kind, sorted(leaks))
        if kind == "reward":
            assert set(m.reward.components) <= REWARD_PARTS, m.reward
        if kind == "applied":
            a = m.applied
            assert a.agent_id != me
            assert not a.args.fields and not a.data.fields and not a.data_json and not a.text, a
        if kind in ("joined", "episode_start", "result"):
            obs = getattr(m, kind).observation
            assert root not in [s.name for s in obs.services], kind
            assert root not in [a.service for a in obs.alerts], kind
            assert not obs.terminal, kind
    return kinds


async def _drain_until(agent: AgentClient, what: Any) -> None:
    """Read `agent`'s stream until `what(message)` holds for one message (batches opened)."""
    while True:
        msg = await agent.receive()
        if any(what(m) for m in _flatten([msg])):
            return


REWARD_PARTS = {
    "step_cost", "world_error", "syntax_error", "hint", "operation", "fault_cured",
    "fault_returned", "fault_relapsed", "fault_repaired", "grade", "team_grade",
    "counterfactual_grade",
}  # fmt: skip
"""Every name a reward component has (`metasre.simulator.rewards`, `service.core.attribution`):
none names a service, a file or a release, whoever's call earned it."""


@pytest.mark.parametrize(
    ("batch", "attribution", "as_json"),
    [
        (False, common_pb2.REWARD_ATTRIBUTION_SHARED, False),
        (True, common_pb2.REWARD_ATTRIBUTION_SHARED, False),
        (True, common_pb2.REWARD_ATTRIBUTION_DIFFERENCE, False),
        (False, common_pb2.REWARD_ATTRIBUTION_MIXED, False),
        (False, common_pb2.REWARD_ATTRIBUTION_SHARED, True),
        (True, common_pb2.REWARD_ATTRIBUTION_MIXED, True),
    ],
)
async def test_a_restricted_stream_carries_no_teammates_finding_live_batched_reset_or_resumed(
    server, channel, batch, attribution, as_json
):
    """A full-view teammate digs up the hidden root (its logs, description, events, config, git,
    a hint) and fixes it; the restricted seat's stream, one message at a time or batched, its
    data as a Struct or as JSON (StreamOptions.data_as_json: a second form of the same answers,
    shared between streams), then after the owner resets the session to another seed, then
    replayed from the start on a resume after its stream dropped, and the unary CallTool's
    answers: nothing secret."""
    control = control_pb2_grpc.ControlServiceStub(channel)
    spec = resolve(PAY).spec(0)
    root = spec.ground_truth.service
    seen = [s.name for s in spec.services if s.name != root]
    from metasre.simulator.views import View

    view = View(services=tuple(seen), deploys=False, code=False)
    secrets = _secrets(spec, view)
    assert any("log line" in why for why in secrets.values())
    created = await control.CreateSession(
        control_pb2.CreateSessionRequest(
            scenario_id=PAY,
            seats=[
                common_pb2.SeatConfig(
                    agent_id="blind",
                    view=common_pb2.View(services=seen, hide_deploys=True, hide_code=True),
                ),
                common_pb2.SeatConfig(agent_id="full"),
            ],
            reward_attribution=attribution,
            team_spirit=0.5,
        )
    )
    sid = created.session.session_id
    tokens = {t.agent_id: t.join_token for t in created.tokens}
    options = agent_pb2.StreamOptions(batch_events=batch, data_as_json=as_json)
    blind, full = AgentClient(channel), AgentClient(channel)
    try:
        blind.send(
            agent_pb2.ConnectRequest(
                join=agent_pb2.JoinSeat(session_id=sid, join_token=tokens["blind"], options=options)
            )
        )
        joined = (await blind.expect("joined")).joined
        blind.agent_id = "blind"
        await full.join(sid, tokens["full"])
        digs = [
            ("read_logs", {"service": root, "lines": 300, "since_minutes": 240}),
            ("describe_service", {"service": root}),
            ("get_events", {"service": root}),
            ("get_config", {"service": root}),
            ("git_log", {"limit": 20}),
            ("ask_hint", {}),
            ("ask_hint", {}),
            *[(s.tool, dict(s.args)) for s in spec.solution if s.tool != "submit_report"],
        ]
        for tool, args in digs:
            cid = full.tool(tool, args)
            reply = await full.result_or_error(cid)
            assert reply.WhichOneof("response") == "result", (tool, reply)
        # The seat's own call, answered after the teammate's: its stream has had them by then.
        mine = blind.tool("get_alerts")
        await _drain_until(blind, lambda m: m.call_id == mine and m.WhichOneof("response"))
        kinds = _check_stream(blind.received, "blind", root, secrets)
        if attribution != common_pb2.REWARD_ATTRIBUTION_DIFFERENCE:
            assert kinds.get("reward", 0) >= len(digs), kinds  # shares of the teammate's calls
        assert kinds.get("applied", 0) == len(digs), kinds

        # The unary CallTool: the same cut, the same refusal.
        stub = agent_pb2_grpc.AgentServiceStub(channel)
        unary = await stub.CallTool(
            agent_pb2.CallToolRequest(
                session_id=sid,
                token=tokens["blind"],
                call=agent_pb2.ToolCall(call_id="u1", tool="get_alerts", args=struct()),
            )
        )
        _check_stream([agent_pb2.ConnectResponse(result=unary.result)], "blind", root, secrets)
        with pytest.raises(Exception) as refused:
            await stub.CallTool(
                agent_pb2.CallToolRequest(
                    session_id=sid,
                    token=tokens["blind"],
                    call=agent_pb2.ToolCall(
                        call_id="u2", tool="read_logs", args=struct({"service": root})
                    ),
                )
            )
        assert "OUTSIDE_VIEW" in str(refused.value) or "outside" in str(refused.value)

        # A reset to another seed: the new page is cut too (a new spec, new secrets).
        await control.ResetSession(control_pb2.ResetSessionRequest(session_id=sid, seed=2))
        await _drain_until(blind, lambda m: m.WhichOneof("response") == "episode_start")
        spec2 = resolve(PAY).spec(2)
        secrets2 = _secrets(spec2, view) if spec2.ground_truth.service == root else {}
        _check_stream(blind.received, "blind", root, {**secrets, **secrets2})

        # The stream drops; a resume from the start replays the whole session log.
        blind.close()
        resumed = AgentClient(channel)
        resumed.send(
            agent_pb2.ConnectRequest(
                resume=agent_pb2.ResumeSeat(
                    session_id=sid,
                    resume_token=joined.resume_token,
                    after_sequence=0,
                    options=options,
                )
            )
        )
        await resumed.expect("joined")
        resumed.agent_id = "blind"
        again = resumed.tool("get_alerts")
        await _drain_until(resumed, lambda m: m.call_id == again and m.WhichOneof("response"))
        _check_stream(resumed.received, "blind", root, secrets)
        resumed.close()
    finally:
        blind.close()
        full.close()


def test_no_view_widens_by_its_spelling():
    """A view's service list is names, compared exactly: a case or whitespace variant of a
    hidden name is not that service, and an empty list is refused rather than read as all."""
    from metasre.simulator.views import View

    view = View(services=("api-gateway",))
    for name in ["payment-service", *_spellings("payment-service")]:
        assert not view.sees(name)
    assert View(services=()).sees("api-gateway") is False


async def test_the_raw_view_message_cannot_widen_a_seat(server, channel):
    """CreateSession is the owner's, but a view message that names no services means all only
    when that is what it says: an empty list with a system hidden still hides that system, and
    a services list of a blank or differently-cased name is refused."""
    control = control_pb2_grpc.ControlServiceStub(channel)
    for services in (["API-GATEWAY"], [" api-gateway"], [""], ["api-gateway", "Api-Gateway"]):
        with pytest.raises(Exception) as caught:
            await control.CreateSession(
                control_pb2.CreateSessionRequest(
                    scenario_id=PAY,
                    seats=[
                        common_pb2.SeatConfig(agent_id="a", view=common_pb2.View(services=services))
                    ],
                )
            )
        assert "INVALID_ARGUMENT" in str(caught.value), services

    def play() -> None:
        with SyncClient(server.address) as client:
            session = client.create_session(PAY, seats=[{"agent_id": "a", "view": {"code": False}}])
            agent = client.agent(session.id, session.tokens["a"])
            try:
                reply = WireCaller(agent)("list_files", {})
                assert not reply.ok and reply.error == "OUTSIDE_VIEW"
            finally:
                agent.close()

    await asyncio.to_thread(play)


async def test_the_episodes_end_names_no_hidden_check_to_a_restricted_seat(server):
    """EpisodeEnded reaches every seat; its grade's check names spell out the remedy (the bad
    migration rolled back, the release back on). A session plays the same seed again after a
    reset by default, so a restricted seat told them would know the answer next episode: it
    gets the grade's scores and components, not the names of the hidden checks."""
    family = "meta-sre/schema-release-v2"
    spec = resolve(family).spec(0)
    dba, app = (next(r for r in spec.roles if r.name == n) for n in ("dba", "app-oncall"))
    migration = spec.ground_truth.location.partition(":")[2]
    assert not app.view.data and migration

    def play() -> None:
        with seated(
            server.address,
            family,
            [
                {"agent_id": "app", "role": app.name},
                {"agent_id": "dba", "role": dba.name},
                {"agent_id": "lead"},
            ],
        ) as (_c, _s, agents):
            report = {
                "root_cause_service": spec.ground_truth.service,
                "root_cause_location": "unknown",
                "category": "bad_migration",
                "remediation": "rollback_migration",
                "summary": "the orders database rejects the orders service's writes",
            }
            assert WireCaller(agents["app"])("submit_report", report).ok
            ends = {}
            for name, agent in agents.items():
                while agent.conn.inbox.episode_end is None:
                    agent.wait_news(agent.news, timeout=30)
                ends[name] = agent.conn.inbox.episode_end
            # A full-view seat is told which check failed, by name; a restricted one is not,
            # even of what its own view shows (the names are written for the whole incident).
            assert migration in json.dumps(ends["lead"])
            for name, role in (("app", app), ("dba", dba)):
                shown = json.dumps(ends[name])
                for secret, why in _secrets(spec, role.view).items():
                    assert secret not in shown, (name, why)
                assert not ends[name]["grade"].get("fail_to_pass")

            # Scores stay: the seat learns how well the team did, not what the answer was.
            def scores(end: dict[str, Any]) -> list[tuple[Any, ...]]:
                return [
                    (c["name"], c["score"], c["weight"], c.get("value"))
                    for c in end["grade"]["components"]
                ]

            assert scores(ends["app"]) == scores(ends["lead"])
            # Its details are made from those scores, never the grader's prose.
            for c in ends["app"]["grade"]["components"]:
                assert c["detail"] == f"{MEASURES.get(c['name'], c['name'])}: {c['score']:g}", c

    await asyncio.to_thread(play)


@pytest.mark.parametrize(
    "view",
    [{"code": False}, {"code": False, "deploys": False}, {"code": False, "data": False}],
)
async def test_a_teammates_hotfix_does_not_show_the_edited_file_to_a_seat_without_code(
    server, view
):
    """A full-view teammate edits the root's code (the fix): the change goes live as a hotfix
    event naming the file, which is the report's location. A seat that does not see the code
    finds it neither in the change timeline nor in the service's log, by any filter."""
    family = "meta-sre/ad-ranking-crash-v2"
    spec = resolve(family).spec(0)
    root = spec.ground_truth.service
    edits = [(s.tool, dict(s.args)) for s in spec.solution if s.tool == "edit_lines"]
    paths = {args["path"] for _, args in edits}
    assert edits and spec.ground_truth.location in paths

    def play() -> None:
        with seated(
            server.address,
            family,
            [{"agent_id": "blind", "view": view}, {"agent_id": "full"}],
        ) as (_c, _s, agents):
            full, blind = WireCaller(agents["full"]), WireCaller(agents["blind"])
            for tool, args in edits:
                assert full(tool, args).ok
            # The full-view seat sees the hotfix, so there is something to hide.
            assert any(p in full("get_events", {"service": root}).text for p in paths)
            looks = [
                ("get_events", {}),
                ("get_events", {"service": root}),
                ("get_events", {"kind": "hotfix"}),
                ("get_events", {"service": root, "kind": "hotfix", "since_minutes": 1}),
                ("read_logs", {"service": root, "lines": 500}),
                ("read_logs", {"service": root, "contains": "hotfix"}),
                ("read_logs", {"service": root, "level": "INFO", "since_minutes": 1}),
                ("describe_service", {"service": root}),
                ("get_config", {"service": root}),
            ]
            # The service's own stack traces may name its files (its signals); the change that
            # names the file edited, and who edited it, is the teammate's call.
            said = [f"hotfix to {p}" for p in paths]
            for tool, args in looks:
                reply = blind(tool, args)
                assert reply.ok, (tool, reply)
                shown = _shown(reply)
                assert not any(s in shown for s in said), (tool, args, reply.text)
                if tool == "get_events":
                    assert not any(p in shown for p in paths), (tool, args, reply.text)
            assert not any(s in json.dumps(agents["blind"].observation) for s in said)

    await asyncio.to_thread(play)


async def test_a_restricted_team_is_graded_as_a_full_view_seat_would_be(server):
    """Grading reads the world and the report, never a view: the dba fixes what only it sees,
    and the app on-call, which sees neither the database nor the data layer, files the report
    naming both (a teammate's message would carry them); the grade is the full seat's."""
    family = "meta-sre/schema-release-v2"
    spec = resolve(family).spec(0)
    fix, report = spec.solution[0], dict(spec.solution[-1].args)
    assert fix.tool == "rollback_migration" and spec.solution[-1].tool == "submit_report"

    def play(seats: list[dict[str, Any]], fixer: str, reporter: str) -> dict[str, Any]:
        with seated(server.address, family, seats) as (client, sid, agents):
            assert WireCaller(agents[fixer])(fix.tool, dict(fix.args)).ok
            refused = WireCaller(agents[reporter])(fix.tool, dict(fix.args))
            if reporter != fixer:
                assert refused.error == "OUTSIDE_VIEW"
            assert WireCaller(agents[reporter])("submit_report", report).ok
            return client.get_grade(sid)["grade"]

    team = await asyncio.to_thread(
        play,
        [{"agent_id": "app", "role": "app-oncall"}, {"agent_id": "dba", "role": "dba"}],
        "dba",
        "app",
    )
    solo = await asyncio.to_thread(play, [{"agent_id": "sre"}], "sre", "sre")
    assert team["resolved"] and solo["resolved"]
    parts = {c["name"]: c["score"] for c in team["components"]}
    assert parts == {c["name"]: c["score"] for c in solo["components"]}
    assert parts["root_cause"] == 1.0
