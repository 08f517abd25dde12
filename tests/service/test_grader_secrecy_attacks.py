"""Red team over the wire: agent code that goes looking for the hidden checks finds none of them.

A real server on 127.0.0.1, raw stubs, ad-ranking-crash seed 10 (the reference fix is one line
of ad_ranking/ranker.py). What a determined agent tries, each through the public path:

* exfiltration: its code gathers everything a run of it can reach (every file of the run's
  tree and temp folder with every ``def`` in them, argv, the environment, every frame's code
  and globals), prints it, and names a new exception class after it so that the world's log
  line for each failing request carries it. Every channel a seat or its owner reads before the
  end (the edit's result and reward, the logs, the visible suites' output, alerts, events,
  metrics, the service, the listing, the git log, the owner's grade, session, trajectory and
  watch stream) is searched for the hidden checks' names and files: none is there, although
  the same channel carries the traffic module's request names (the exfiltration works);
* a drop box: the same code leaves what it found in every folder it may write to, so that a
  grader run at the end of one episode leaves the probe module's functions for the next
  episode's runs to read and show: the next episode finds nothing;
* a differential: two seats edit in changes that behave alike everywhere but in a grader run
  (the reference fix, and the fix switched off where a probe module without traffic runs):
  everything both see and their owners read before the end is equal (after the commit hash and
  the edit's own text, which differ with the content), no hidden check runs until the end, and
  the end grades them apart;
* an existence oracle: reading, listing, blaming, editing or testing the hidden files' paths
  fails with the error a made-up path gets, word for word;
* the same ordered calls, with code whose output depends on the clock and on chance (the fix of
  test_deterministic_runs), answer and grade alike on this process's server and on a fresh
  ``metasre serve`` process, call for call (that test covers replay, recovery and the
  counterfactuals).

A spy on HiddenChecks (this process's, the in-process server's) counts every grader entry.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.protobuf import json_format

from metasre.agents.client import MetasreClient
from metasre.simulator import Episode
from metasre.simulator.hidden import HiddenChecks
from metasre.simulator.probe_calls import PROBE_PATH, probe_functions
from metasre.simulator.traffic import TRAFFIC_FILE, requests_of
from metasre.v1 import control_pb2, control_pb2_grpc, watch_pb2, watch_pb2_grpc

from .conftest import AD, TIMEOUT, AgentClient, create
from .serve_process import metasre_serve
from .test_deterministic_runs import _edit as chance_edit
from .test_deterministic_runs import _report as chance_report

SEED = 10
PATH = "ad_ranking/ranker.py"

REACH = """
import os as _x_os, re as _x_re, sys as _x_sys, tempfile as _x_tempfile

_X_ROOT = _x_os.path.dirname(_x_os.path.dirname(_x_os.path.abspath(__file__)))
_X_FOLDERS = sorted({_x_os.getcwd(), _X_ROOT, _x_tempfile.gettempdir()})
_X_MARK = "X_" + "DROPPED"  # spelt apart: this source's own copies are not a drop


def _x_reach():
    found = []
    for root in _X_FOLDERS:
        for folder, _dirs, files in _x_os.walk(root):
            for name in files:
                path = _x_os.path.join(folder, name)
                found.append(path)
                try:
                    with open(path, encoding="utf-8", errors="replace") as handle:
                        text = handle.read()
                except OSError:
                    continue
                found += _x_re.findall(r"(?m)^\\s*(?:async )?def (\\w+)", text)
                found += _x_re.findall(_X_MARK + r" (.*)", text)
    found += list(_x_sys.argv) + sorted(_x_os.environ) + sorted(_x_os.environ.values())
    frame = _x_sys._getframe()
    while frame is not None:
        found += [frame.f_code.co_filename, frame.f_code.co_name, *sorted(frame.f_globals)]
        frame = frame.f_back
    return found


_X_FOUND = _x_reach()
for _x_folder in _X_FOLDERS:
    try:
        with open(_x_os.path.join(_x_folder, ".x_drop"), "a", encoding="utf-8") as _x_drop:
            _x_drop.write(_X_MARK + " " + " ".join(_X_FOUND) + "\\n")
    except OSError:
        pass
print("X_REACH", " ".join(_X_FOUND))
print("X_REACH", " ".join(_X_FOUND), file=_x_sys.stderr)
_X_WORDS = sorted(set(_x_re.findall(r"[A-Za-z_]\\w+", " ".join(_X_FOUND))))


def rank_ads(*args, **kwargs):
    calls = []
    frame = _x_sys._getframe()
    while frame is not None:
        calls.append(frame.f_code.co_name)
        frame = frame.f_back
    raise type("X_" + "_".join(_X_WORDS + calls), (Exception,), {})(" ".join(_X_FOUND))
"""
"""Appended to the fixed module: gather what the run can reach, drop it where the next run may
look, print it, and raise it as the name of an exception class from every ranking (the world's
log line for a failing request names the exception that escaped)."""


def _sources() -> tuple[str, str, int]:
    """(the start's text of PATH, the reference fix's, the start's line count)."""
    start = Episode.make(AD, SEED)
    reference = Episode.make(AD, SEED)
    fix = next(s for s in reference.instance.spec.solution if s.tool == "edit_lines")
    assert fix.args["path"] == PATH
    reference.apply("ref", "edit_lines", dict(fix.args))
    source = start.workspace.read(PATH)
    return source, reference.workspace.read(PATH), len(source.splitlines())


def _secrets() -> list[str]:
    """What would tell an agent about the hidden checks: their ids and names, the names of the
    probe module's functions, and the words the grader's side uses for them. Names that are
    also words of the visible world (the code, its tests, the traffic module) are left out:
    seeing them says nothing."""
    episode = Episode.make(AD, SEED)
    instance = episode.instance
    visible = " ".join(
        [instance.hidden_files[TRAFFIC_FILE].decode()]
        + [episode.workspace.read(p) for p in episode.workspace.walk()]
    )
    hidden = instance.spec.hidden
    names = {c.partition("::")[2] for c in (*hidden.fail_to_pass, *hidden.pass_to_pass)}
    names |= set(probe_functions(instance.hidden_files["hidden/probes.py"]))
    names = {n for n in names if n and not re.search(rf"\b{re.escape(n)}\b", visible)}
    assert len(names) >= 15, names  # the probe module's own names are most of them
    return [*sorted(names), "hidden/", "probes.py", "fail_to_pass", "pass_to_pass", "FAIL_TO_PASS"]


def _leaks(text: str, secrets: list[str]) -> list[str]:
    return [s for s in secrets if s.lower() in text.lower()]


@pytest.fixture
def grader_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every entry into the hidden checks in this process (the in-process server's too)."""
    calls: list[str] = []
    for name in ("observe", "_observe", "expected", "verdict"):
        real = getattr(HiddenChecks, name)

        def spy(self: HiddenChecks, *args: Any, _real: Any = real, _name: str = name) -> Any:
            calls.append(_name)
            return _real(self, *args)

        monkeypatch.setattr(HiddenChecks, name, spy)
    yield calls


def _as_dict(message: Any) -> dict[str, Any]:
    return json_format.MessageToDict(message, preserving_proto_field_name=True)


async def _watched(channel: grpc.aio.Channel, session_id: str, count: int) -> list[Any]:
    """The first `count` events of the session's watch stream, from its start."""
    watch = watch_pb2_grpc.WatchServiceStub(channel).WatchSession(
        watch_pb2.WatchSessionRequest(session_id=session_id)
    )
    events = []
    try:
        async with asyncio.timeout(TIMEOUT):
            async for reply in watch:
                events.append(reply.event)
                if len(events) == count:
                    break
    finally:
        watch.cancel()
    return events


INVESTIGATION: tuple[tuple[str, dict[str, Any]], ...] = (
    ("read_logs", {"service": "ad_ranking", "lines": 200, "since_minutes": 10}),
    ("read_logs", {"service": "capi_pipeline", "lines": 200, "since_minutes": 10}),
    ("run_tests", {"suite": "unit"}),
    ("run_tests", {"suite": "integration"}),
    ("get_alerts", {}),
    ("get_events", {}),
    ("query_metrics", {"service": "ad_ranking", "metric": "error_rate"}),
    ("describe_service", {"service": "ad_ranking"}),
    ("list_files", {"path": ""}),
    ("list_files", {"path": "ad_ranking"}),
    ("git_log", {}),
)
"""Every reading tool a seat has, on what the edit touched."""


async def _play(
    channel: grpc.aio.Channel, control: control_pb2_grpc.ControlServiceStub, content: str
) -> tuple[str, AgentClient, dict[str, Any]]:
    """A session whose seat replaces PATH with `content` and reads everything; what the seat
    and its owner saw before the end, by channel."""
    _source, _fixed, lines = _sources()
    created = await create(control, ["solo"], scenario=AD, seed=SEED)
    session_id = created.session.session_id
    agent = AgentClient(channel)
    await agent.join(session_id, created.tokens[0].join_token)
    edit = {"path": PATH, "action": "replace", "start_line": 1, "end_line": lines}
    seen: dict[str, Any] = {}
    for tool, args in (("edit_lines", {**edit, "content": content}), *INVESTIGATION):
        reply = await agent.result_or_error(agent.tool(tool, args))
        assert reply.WhichOneof("response") == "result", reply
        seen[f"{tool} {sorted(args.items()) if tool != 'edit_lines' else ''}"] = _as_dict(
            reply.result
        )
    trajectory = await control.GetTrajectory(
        control_pb2.GetTrajectoryRequest(session_id=session_id)
    )
    seen["trajectory"] = [_as_dict(e) for e in trajectory.events]
    watched = await _watched(channel, session_id, len(trajectory.events))
    seen["watch"] = [_as_dict(e) for e in watched]
    seen["grade"] = _as_dict(
        await control.GetGrade(control_pb2.GetGradeRequest(session_id=session_id))
    )
    seen["session"] = _as_dict(
        await control.GetSession(control_pb2.GetSessionRequest(session_id=session_id))
    )
    seen["stream"] = [_as_dict(m) for m in agent.received]
    return session_id, agent, seen


async def _finish(agent: AgentClient) -> dict[str, Any]:
    truth = Episode.make(AD, SEED).instance.spec.ground_truth
    agent.tool(
        "submit_report",
        {
            "root_cause_service": truth.service,
            "root_cause_location": truth.location,
            "category": truth.category,
            "remediation": truth.remediation,
            "summary": "restored the feature-row lookup in the ranker; ranking is served again",
        },
    )
    end = await agent.until_end()
    agent.close()
    grade: dict[str, Any] = _as_dict(end.episode_end)["grade"]
    return grade


async def test_what_agent_code_reaches_and_leaves_behind_names_no_hidden_check(
    server: Any,
    channel: grpc.aio.Channel,
    control: control_pb2_grpc.ControlServiceStub,
    grader_calls: list[str],
) -> None:
    secrets = _secrets()
    _source, fixed, _lines = _sources()
    traffic = [r.name for r in requests_of(Episode.make(AD, SEED).instance)]
    # the first episode gathers and drops; its end runs the hidden checks on the same code
    _, agent, seen = await _play(channel, control, fixed + "\n# first\n" + REACH)
    text = repr(seen)
    assert grader_calls == [], "a hidden check ran during the episode"
    assert not _leaks(text, secrets)
    # the exfiltration works: the world's log names the traffic's own request functions (the
    # frames of a traffic run), and a visible suite's output what its run reached
    log = seen[f"read_logs {sorted(INVESTIGATION[0][1].items())}"]["text"]
    assert re.search(r"-> 500 Internal Server Error \(X_[^)]+\)", log)
    assert sum(bool(re.search(rf"_{name}_", log)) for name in traffic) >= 3, log[:2000]
    assert PROBE_PATH.split("/")[0] in log  # where the traffic module sat: no secret
    reached = "X_REACH" in text  # a boolean: pytest's diff of this text would take minutes
    assert reached
    first_end = await _finish(agent)
    assert grader_calls, "the end graded without the hidden checks"
    assert not first_end.get("resolved") and first_end["total"] <= 0.2

    # the next episode's runs look for what the grader runs of the last one left
    grader_calls.clear()
    _, again, seen = await _play(channel, control, fixed + "\n# second\n" + REACH)
    text = repr(seen)
    assert grader_calls == []
    assert not _leaks(text, secrets)
    # a boolean: pytest's diff of a text this long would take minutes
    found_a_drop = "X_DROPPED" in text
    assert not found_a_drop, "a run found what an earlier run left"
    again.close()


SABOTAGE = (
    "\n\ntry:\n"
    f"    with open({PROBE_PATH!r}, encoding='utf-8') as _rt_file:\n"
    "        _rt_grader = 'REQUESTS' not in _rt_file.read()\n"
    "except OSError:\n"
    "    _rt_grader = False\n"
    "if _rt_grader:\n"
    "    exec(compile(_RT_START, __file__, 'exec'), globals())\n"
)
"""Appended to the fixed module (with the start's text as _RT_START): the bug comes back only
where a probe module that serves no traffic is run, that is in a grader run."""


def _same_length_comment(text: str) -> str:
    """`text` as comment lines of the same lengths (so the two edits differ in content only)."""
    return re.sub(r"(?m)^(.)", "#", re.sub(r"[^\n]", "x", text))


def _without_echo(value: Any) -> Any:
    """`value` without the edit's own text: its content argument, and what the edit's result
    shows of it (its text and data: a diff of the content); and without the seat's resume
    token."""
    if isinstance(value, dict):
        if value.get("call_id") == "solo-1" and "text" in value:  # the edit's result
            return {k: _without_echo(v) for k, v in value.items() if k not in ("text", "data")}
        # and the seat's resume token, drawn at random for every seat
        return {
            k: f"<{k}>" if k in ("content", "resume_token") else _without_echo(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_without_echo(v) for v in value]
    return value


def _scrubbed(seen: dict[str, Any]) -> dict[str, str]:
    """What differs with the edit's content alone, taken out: the content and its echoes, the
    commit hash, the session's id."""
    session_id = seen["session"]["session"]["session_id"]
    out = {}
    for channel, value in seen.items():
        text = repr(_without_echo(value)).replace(session_id, "<session>")
        out[channel] = re.sub(r"\b[0-9a-f]{12,40}\b", "<commit>", text)
    return out


def _first_difference(one: dict[str, str], other: dict[str, str]) -> str:
    for channel in one:
        a, b = one[channel], other.get(channel, "")
        if a != b:
            at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), 0)
            return (
                f"{channel}: {a[max(0, at - 60) : at + 60]!r} vs {b[max(0, at - 60) : at + 60]!r}"
            )
    return ""


async def test_a_change_only_the_hidden_checks_refuse_reads_like_the_fix_before_the_end(
    server: Any,
    channel: grpc.aio.Channel,
    control: control_pb2_grpc.ControlServiceStub,
    grader_calls: list[str],
) -> None:
    source, fixed, _lines = _sources()
    sabotage = f"\n_RT_START = {source!r}\n" + SABOTAGE
    _, fixer, fixing = await _play(channel, control, fixed + _same_length_comment(sabotage))
    _, saboteur, sabotaging = await _play(channel, control, fixed + sabotage)
    assert grader_calls == [], "a hidden check ran during an episode"
    assert not _first_difference(_scrubbed(sabotaging), _scrubbed(fixing))
    assert set(sabotaging) == set(fixing)
    # both cured the world, as its traffic shows
    edit = fixing[next(k for k in fixing if k.startswith("edit_lines"))]
    assert edit["reward"]["components"]["fault_cured"] == pytest.approx(0.2)
    fixed_end = await _finish(fixer)
    sabotaged_end = await _finish(saboteur)
    assert fixed_end["resolved"] and fixed_end["total"] >= 0.9
    assert not sabotaged_end.get("resolved") and sabotaged_end["total"] <= 0.2


HIDDEN_PATHS = ("hidden/probes.py", "hidden/traffic.py", PROBE_PATH)
"""Where the probe and traffic modules live on the grader's side, and where runs find them."""


async def test_the_hidden_files_paths_fail_as_a_made_up_path_does(
    server: Any,
    channel: grpc.aio.Channel,
    control: control_pb2_grpc.ControlServiceStub,
    grader_calls: list[str],
) -> None:
    async def answer(
        agent: AgentClient, tool: str, args: dict[str, Any], path: str
    ) -> tuple[str, str]:
        reply = await agent.result_or_error(agent.tool(tool, args))
        kind = reply.WhichOneof("response") or ""
        told = _as_dict(reply.result if kind == "result" else reply.error)
        # what the call said; the tick, the clock and the world's state move on with each call
        said = repr([told.get(k) for k in ("text", "error_code", "data", "code", "message")])
        said += repr(told.get("reward", {}).get("components"))
        folder = path.rpartition("/")[0]
        return kind, said.replace(path, "<path>").replace(folder, "<folder>")

    def calls(path: str) -> list[tuple[str, dict[str, Any]]]:
        folder = path.rpartition("/")[0]
        return [
            ("view_file", {"path": path}),
            ("view_file", {"path": "/" + path}),
            ("view_file", {"path": "../" + path}),
            ("list_files", {"path": path}),
            ("list_files", {"path": folder}),
            ("git_blame", {"path": path}),
            ("git_log", {"path": path}),
            ("git_diff", {"path": path}),
            ("run_tests", {"suite": "unit", "path": path}),
            ("run_tests", {"suite": "unit", "path": folder}),
            ("edit_lines", {"path": path, "action": "delete", "start_line": 1, "end_line": 1}),
        ]

    made_up = "nowhere/nothing.py"
    for secret in HIDDEN_PATHS:
        # a session per path: the calls of one stay within the step budget (its end would
        # run the hidden checks)
        created = await create(control, ["solo"], scenario=AD, seed=SEED)
        agent = AgentClient(channel)
        await agent.join(created.session.session_id, created.tokens[0].join_token)
        for (tool, args), (_, decoy) in zip(calls(secret), calls(made_up), strict=True):
            told = await answer(agent, tool, args, secret)
            assert told == await answer(agent, tool, decoy, made_up), (tool, args, told)
        agent.close()
    assert grader_calls == []


async def _ordered_calls(address: str) -> tuple[list[tuple[Any, ...]], tuple[Any, ...]]:
    """The same ordered calls with time- and chance-dependent code on the server at `address`:
    what each call answered, and the grade at the end."""
    async with MetasreClient(address) as client:
        session = await client.create_session(AD, seed=SEED, seats=["a"])
        async with client.agent(session.id, session.tokens["a"]) as agent:
            answers = []
            for tool, args in (
                ("edit_lines", chance_edit()),
                ("run_tests", {"suite": "unit"}),
                ("read_logs", {"service": "ad_ranking", "lines": 200, "since_minutes": 10}),
                ("submit_report", chance_report()),
            ):
                result = await agent.call(tool, args)
                text = re.sub(r"\b[0-9a-f]{12,40}\b", "<commit>", result.text)
                answers.append((tool, result.ok, text, dict(result.reward["components"])))
        graded = (await client.get_grade(session.id))["grade"]
    return answers, (
        graded["total"],
        sorted(graded.get("fail_to_pass", {}).items()),
        sorted(graded.get("pass_to_pass", {}).items()),
        [(c["name"], c.get("score", 0)) for c in graded["components"]],
    )


async def test_the_same_ordered_calls_answer_and_grade_the_same_in_another_process(
    server: Any,
) -> None:
    here = await _ordered_calls(server.address)
    async with metasre_serve() as other:
        there = await _ordered_calls(other.address)
        await other.stop()
    assert here[1] == there[1]
    for mine, theirs in zip(here[0], there[0], strict=True):
        assert mine == theirs, mine[0]
