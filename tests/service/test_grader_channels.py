"""Over the wire: nothing from the hidden checks reaches anyone before the episode ends.

A real server on 127.0.0.1, raw stubs. Two sessions play the same instance of
ad-ranking-crash (seed 10: a missing feature row no longer handled); one seat edits in the
reference fix, the other a patch that serves only the production traffic right (the fix,
switched on only when the traffic module is what runs). Whatever the seats and the owner see
before the report is identical in content between the two, and no hidden check has run at
all (a spy on the grader's one entry point, `HiddenChecks._observe`, in this process); then
the end grades them apart. The world's reaction comes from the traffic, whose requests and
outcomes the root service's log shows. A provisional GetGrade names no check. A seat is not
told its scenario or seed unless the owner asked for it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.protobuf import json_format

from metasre.simulator import Episode
from metasre.simulator.hidden import HiddenChecks
from metasre.v1 import common_pb2, control_pb2, control_pb2_grpc

from .conftest import AD, AgentClient, create

SEED = 10
"""ranker-missing-row: `features_by_ad[...]` where `.get(...)` was."""


def _fix_and_patch() -> tuple[str, str, str, int]:
    """(path, the reference fix's text, a traffic-only patch's text, the start's line count)."""
    start = Episode.make(AD, SEED)
    reference = Episode.make(AD, SEED)
    edit = next(s for s in reference.instance.spec.solution if s.tool == "edit_lines")
    path = str(edit.args["path"])
    reference.apply("ref", "edit_lines", dict(edit.args))
    source, fixed = start.workspace.read(path), reference.workspace.read(path)
    patch = source + (
        "\n\ntry:\n"
        "    with open('traffic/replay.py', encoding='utf-8') as _rt_file:\n"
        "        _rt_traffic = 'REQUESTS' in _rt_file.read()\n"
        "except OSError:\n"
        "    _rt_traffic = False\n"
        "if _rt_traffic:\n"
        f"    exec(compile({fixed!r}, __file__, 'exec'), globals())\n"
    )
    return path, fixed, patch, len(source.splitlines())


@pytest.fixture
def hidden_runs(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every time the grader observes code, in this process (the server's too)."""
    runs: list[str] = []
    real = HiddenChecks._observe

    def spy(self: HiddenChecks, instance: Any, runtime: Any, key: bytes) -> Any:
        runs.append(instance.spec.id)
        return real(self, instance, runtime, key)

    monkeypatch.setattr(HiddenChecks, "_observe", spy)
    yield runs


def _as_dict(message: Any) -> dict[str, Any]:
    return json_format.MessageToDict(message, preserving_proto_field_name=True)


def _scrubbed(text: str) -> str:
    """A result's text without the lines an edit echoes (they show the content sent)."""
    return re.sub(r"(?m)^.*(_rt_|exec\(|\+|-).*$", "", text)


async def _seen_before_the_end(
    channel: grpc.aio.Channel, control: control_pb2_grpc.ControlServiceStub, content: str
) -> tuple[str, dict[str, Any], AgentClient]:
    path, _fixed, _patch, lines = _fix_and_patch()
    created = await create(control, ["solo"], scenario=AD, seed=SEED)
    agent = AgentClient(channel)
    await agent.join(created.session.session_id, created.tokens[0].join_token)
    edit = agent.tool(
        "edit_lines",
        {"path": path, "action": "replace", "start_line": 1, "end_line": lines, "content": content},
    )
    edited = (await agent.result_or_error(edit)).result
    assert edited.ok, edited.text
    logs = agent.tool("read_logs", {"service": "ad_ranking", "lines": 60, "since_minutes": 5})
    log = (await agent.result_or_error(logs)).result
    alerts = agent.tool("get_alerts", {})
    alerting = (await agent.result_or_error(alerts)).result
    grade = await control.GetGrade(
        control_pb2.GetGradeRequest(session_id=created.session.session_id)
    )
    seen = {
        "edit_reward": _as_dict(edited.reward),
        "edit_observation": _as_dict(edited.observation),
        "edit_text": _scrubbed(edited.text),
        "log": log.text,
        "alerts": alerting.text,
        "after_alerts": _as_dict(alerting.observation),
        "grade": _as_dict(grade),
    }
    return created.session.session_id, seen, agent


async def _finish(agent: AgentClient) -> dict[str, Any]:
    truth = Episode.make(AD, SEED).instance.spec.ground_truth
    agent.tool(
        "submit_report",
        {
            "root_cause_service": truth.service,
            "root_cause_location": truth.location,
            "category": truth.category,
            "remediation": truth.remediation,
            "summary": "restored the feature-row lookup; the traffic is served again",
        },
    )
    end = await agent.until_end()
    agent.close()
    return _as_dict(end.episode_end)


async def test_nothing_before_the_end_depends_on_the_hidden_checks(
    server: Any,
    channel: grpc.aio.Channel,
    control: control_pb2_grpc.ControlServiceStub,
    hidden_runs: list[str],
) -> None:
    _path, fixed, patch, _lines = _fix_and_patch()
    _, fixing, fixer = await _seen_before_the_end(channel, control, fixed)
    _, patching, patcher = await _seen_before_the_end(channel, control, patch)
    # what both seats and their owners saw, content for content
    assert patching == fixing
    assert hidden_runs == [], "a hidden check ran during an episode"
    # the world reacted to both changes, through the production traffic
    assert fixing["edit_reward"]["components"]["fault_cured"] == pytest.approx(0.2)
    assert re.search(
        r"POST /v1/rank candidates=\[ad-a c-1 1000000, ad-7731 c-3 900000\] -> 400", fixing["log"]
    )
    # a provisional grade: nothing hidden, every judged part pending
    provisional = fixing["grade"]["grade"]
    assert not provisional.get("fail_to_pass") and not provisional.get("pass_to_pass")
    assert not provisional.get("final", False) and not provisional.get("resolved", False)
    for part in provisional["components"]:
        if part["name"] in ("fix", "no_regressions", "root_cause", "report", "efficiency"):
            assert part.get("score", 0) == 0 and "judged when the episode ends" in part["detail"]
    assert {p["name"] for p in provisional["components"]} <= {
        "fix",
        "no_regressions",
        "root_cause",
        "report",
        "sla",
        "efficiency",
        "hints",
    }
    # the end tells them apart, and only the end ran the hidden checks
    fixed_end = await _finish(fixer)
    patched_end = await _finish(patcher)
    assert hidden_runs, "the end graded without the hidden checks"
    assert fixed_end["grade"]["resolved"] and fixed_end["grade"]["total"] >= 0.9
    assert patched_end["grade"]["total"] <= 0.2 and not patched_end["grade"].get("resolved")


async def test_a_failing_change_shows_its_requests_failing_in_the_log(
    server: Any,
    channel: grpc.aio.Channel,
    control: control_pb2_grpc.ControlServiceStub,
    hidden_runs: list[str],
) -> None:
    path, _fixed, _patch, lines = _fix_and_patch()
    created = await create(control, ["solo"], scenario=AD, seed=SEED)
    agent = AgentClient(channel)
    await agent.join(created.session.session_id, created.tokens[0].join_token)
    start = Episode.make(AD, SEED).workspace.read(path)
    # a harmless change: the bug stays, so does the traffic's failure
    call = agent.tool(
        "edit_lines",
        {
            "path": path,
            "action": "replace",
            "start_line": 1,
            "end_line": lines,
            "content": start + "\n# looked at this\n",
        },
    )
    edited = (await agent.result_or_error(call)).result
    assert "fault_cured" not in _as_dict(edited.reward).get("components", {})
    logs = agent.tool("read_logs", {"service": "ad_ranking", "level": "ERROR", "since_minutes": 3})
    text = (await agent.result_or_error(logs)).result.text
    assert re.search(r"POST /v1/rank .*ad-7731.* -> 500 Internal Server Error \(KeyError\)", text)
    assert hidden_runs == []
    agent.close()


@pytest.mark.parametrize("told", [False, True], ids=["not-told", "told"])
async def test_a_seat_is_told_its_instance_only_when_the_owner_asks(
    server: Any,
    channel: grpc.aio.Channel,
    control: control_pb2_grpc.ControlServiceStub,
    told: bool,
) -> None:
    created = await control.CreateSession(
        control_pb2.CreateSessionRequest(
            scenario_id=AD,
            seed=SEED,
            seats=[common_pb2.SeatConfig(agent_id="solo")],
            tell_seats_instance=told,
        )
    )
    session_id = created.session.session_id
    # the owner always sees the instance
    for info in (
        created.session,
        (await control.GetSession(control_pb2.GetSessionRequest(session_id=session_id))).session,
    ):
        assert (info.scenario_id, info.seed, info.tell_seats_instance) == (AD, SEED, told)
    agent = AgentClient(channel)
    joined = await agent.join(session_id, created.tokens[0].join_token)
    started = await agent.expect("episode_start")
    call = agent.tool("get_alerts", {})
    result = (await agent.result_or_error(call)).result
    on_stream = [
        joined.session.scenario_id,
        joined.observation.scenario_id,
        started.episode_start.observation.scenario_id,
        result.observation.scenario_id,
    ]
    if told:
        assert (joined.session.scenario_id, joined.session.seed) == (AD, SEED)
        assert started.episode_start.seed == SEED
    else:
        assert joined.session.seed == 0 and started.episode_start.seed == 0
        assert on_stream == ["", "", "", ""]
        # nor anywhere in what the seat received, in any form
        everything = "".join(str(m) for m in agent.received)
        assert "ad-ranking-crash" not in everything
        assert not re.search(rf"\bseed\D{{0,4}}{SEED}\b", everything)
    agent.close()
