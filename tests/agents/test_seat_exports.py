"""Exports of what each seat's model saw: `metasre llm` records it, `metasre export` writes it.

The byte-for-byte check compares the export with the request bodies a chat endpoint on
127.0.0.1 received from `metasre llm`. Each format is then read by its consumer: the OpenAI
lines against the message and tool types of the official `openai` SDK (every key declared,
every declared requirement met), the `hf` lines with `datasets.load_dataset`, the ATIF
documents with `atif.Trajectory`. Team episodes give one conversation per seat, each within
its seat's view.
"""

from __future__ import annotations

import asyncio
import collections.abc
import json
import os
import subprocess
import sys
import types
import typing
from pathlib import Path
from typing import Any

import atif
import datasets
import pytest
import typing_extensions
from openai.types.chat import (
    ChatCompletionAssistantMessageParam,
    ChatCompletionFunctionToolParam,
    ChatCompletionSystemMessageParam,
    ChatCompletionToolMessageParam,
    ChatCompletionUserMessageParam,
)

from metasre.agents.sync import SyncClient
from metasre.agents.team_session import play_team_session
from metasre.cli.main import main
from metasre.service import ServerConfig, build_server
from metasre.simulator import resolve
from metasre.simulator.scenarios.splits import split_of

from .test_llm import StandIn, sre_script

# Under `pytest -n`: its module fixtures play and export whole runs: once, on one worker.
pytestmark = pytest.mark.xdist_group("seat-exports")

OPENAI_MESSAGE = {
    "system": ChatCompletionSystemMessageParam,
    "user": ChatCompletionUserMessageParam,
    "assistant": ChatCompletionAssistantMessageParam,
    "tool": ChatCompletionToolMessageParam,
}
# The fine-tuning line's own keys (FineTuneChatRequestInput in openai/openai-openapi); the
# deprecated `functions` is not written.
OPENAI_LINE_KEYS = {"messages", "tools", "parallel_tool_calls"}


def _mismatch(value: Any, hint: Any, where: str = "$") -> list[str]:
    """Where `value` departs from the SDK type `hint`: unknown or missing keys, wrong types."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Required, typing.NotRequired):
        return _mismatch(value, args[0], where)
    if hint in (object, typing.Any):
        return []
    if typing_extensions.is_typeddict(hint):
        if not isinstance(value, dict):
            return [f"{where}: {type(value).__name__}, not an object"]
        hints = typing.get_type_hints(hint, include_extras=True)
        wrong = [f"{where}.{k}: not a key of {hint.__name__}" for k in value if k not in hints]
        wrong += [
            f"{where}.{k}: required by {hint.__name__}"
            for k, h in hints.items()
            if typing.get_origin(h) is typing.Required and k not in value
        ]
        for key, item in value.items():
            if key in hints:
                wrong += _mismatch(item, hints[key], f"{where}.{key}")
        return wrong
    if origin in (typing.Union, types.UnionType):
        tries = [_mismatch(value, option, where) for option in args]
        return [] if any(not t for t in tries) else min(tries, key=len)
    if origin is typing.Literal:
        return [] if value in args else [f"{where}: {value!r} is not one of {args}"]
    if origin in (collections.abc.Iterable, list):
        if not isinstance(value, list):
            return [f"{where}: not a list"]
        items = (_mismatch(item, args[0], f"{where}[{i}]") for i, item in enumerate(value))
        return [e for wrong in items for e in wrong]
    if origin is dict:
        return [] if isinstance(value, dict) else [f"{where}: not an object"]
    if hint is type(None):
        return [] if value is None else [f"{where}: not null"]
    if isinstance(hint, type):
        return [] if isinstance(value, hint) else [f"{where}: not {hint.__name__}"]
    raise AssertionError(f"{where}: the check cannot read the SDK type {hint!r}")


def assert_openai_line(line: dict[str, Any]) -> None:
    assert set(line) <= OPENAI_LINE_KEYS, set(line) - OPENAI_LINE_KEYS
    wrong: list[str] = []
    for i, message in enumerate(line["messages"]):
        wrong += _mismatch(message, OPENAI_MESSAGE[message["role"]], f"messages[{i}]")
    for i, tool in enumerate(line["tools"]):
        wrong += _mismatch(tool, ChatCompletionFunctionToolParam, f"tools[{i}]")
    assert wrong == []


def test_the_openai_check_is_the_sdks_types_and_refuses_what_they_do_not_declare():
    good = {"role": "assistant", "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "x", "arguments": "{"}}
    ]}  # fmt: skip
    assert _mismatch(good, ChatCompletionAssistantMessageParam) == []
    dict_args = json.loads(json.dumps(good))
    dict_args["tool_calls"][0]["function"]["arguments"] = {"a": 1}
    assert _mismatch(dict_args, ChatCompletionAssistantMessageParam)
    assert _mismatch({**good, "name": "a", "reward": 1}, ChatCompletionAssistantMessageParam)
    assert _mismatch({"role": "tool", "content": "x"}, ChatCompletionToolMessageParam)


def _metasre(*args: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "metasre.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def llm_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """`metasre llm` against a scripted endpoint (with its malformed calls), then exports."""
    folder = tmp_path_factory.mktemp("llm-export")
    with StandIn(sre_script) as stand_in:
        env = {"METASRE_LLM_BASE_URL": stand_in.base_url}
        result = json.loads(_metasre("llm", "--model", "stand-in", "--json", cwd=folder, env=env))
        requests = stand_in.requests
    for fmt in ("openai", "hf", "atif", "episodes"):
        _export(folder, fmt)
    for split in ("train", "test"):
        _export(folder, "hf", "--split", split, name=f"hf-{split}")
    return {"folder": folder, "result": result, "requests": requests}


def _export(folder: Path, fmt: str, *args: str, name: str = "") -> None:
    """`metasre export` of the store in `folder`, in this process (the command's own code)."""
    out = str(folder / f"{name or fmt}.jsonl")
    store = str(folder / "metasre.db")
    assert main(["export", "--store", store, "--format", fmt, "--out", out, *args]) == 0


def test_metasre_llm_and_the_openai_export_agree_byte_for_byte_on_what_the_model_saw(llm_run):
    (line,) = _lines(llm_run["folder"] / "openai.jsonl")
    messages = line["messages"]
    for body in llm_run["requests"]:
        # Every request's conversation is where the exported one stood at that turn.
        sent = body["messages"]
        assert json.dumps(messages[: len(sent)]) == json.dumps(sent)
        assert json.dumps(line["tools"]) == json.dumps(body["tools"])
    assert json.dumps(messages) == json.dumps(llm_run["result"]["messages"])
    assert messages[0]["role"] == "system" and messages[1]["content"].startswith("You have been")
    # Malformed calls are kept as emitted, with the error the model was answered with.
    calls = [c["function"] for m in messages for c in m.get("tool_calls", ())]
    assert {"name": "describe_service", "arguments": '{"service": "payment-service"'} in calls
    assert {"name": "roll_back_everything", "arguments": '{"now": true}'} in calls
    answers = [m["content"] for m in messages if m["role"] == "tool"]
    assert sum(a.startswith("ERROR") for a in answers) == 3
    assert_openai_line(line)


def test_the_hf_export_loads_with_datasets_one_row_per_seat_episode(llm_run):
    folder = llm_run["folder"]
    loaded = datasets.load_dataset("json", data_files={"exported": str(folder / "hf.jsonl")})
    (row,) = loaded["exported"]
    (episode,) = _lines(folder / "episodes.jsonl")
    assert row["agent_id"] == "llm"
    # The split column is the one home's (splits.py) answer for the episode's family and seed,
    # and --split keeps exactly the rows that say it.
    split = split_of(resolve(episode["scenario_id"]), episode["seed"])
    assert row["split"] == split
    other = "train" if split == "test" else "test"
    (kept,) = datasets.load_dataset("json", data_files={split: str(folder / f"hf-{split}.jsonl")})[
        split
    ]
    assert kept == row
    assert _lines(folder / f"hf-{other}.jsonl") == []
    assert row["scenario_id"] == episode["scenario_id"] and row["seed"] == episode["seed"]
    assert row["grade"] == pytest.approx(episode["grade"]["total"]) and row["resolved"]
    assert row["reward"] == pytest.approx(episode["agent_rewards"]["llm"])
    parts = sum(c["value"] for c in row["reward_components"])
    assert parts == pytest.approx(row["reward"], abs=1e-6)
    assert json.loads(row["tools"]) == llm_run["requests"][0]["tools"]
    sent = [m["content"] for m in llm_run["result"]["messages"]]
    assert [m["content"] for m in row["messages"]] == sent


def test_the_atif_export_validates_with_the_atif_package(llm_run):
    (document,) = _lines(llm_run["folder"] / "atif.jsonl")
    trajectory = atif.Trajectory.model_validate(document)
    assert trajectory.agent.model_name == "stand-in"
    calls = [c for s in trajectory.steps for c in s.tool_calls or ()]
    cut = next(c for c in calls if c.function_name == "describe_service" and c.extra)
    assert cut.extra == {"raw_arguments": '{"service": "payment-service"', "malformed": True}
    answered = {
        r.source_call_id for s in trajectory.steps if s.observation for r in s.observation.results
    }
    assert answered == {c.tool_call_id for c in calls}
    (episode,) = _lines(llm_run["folder"] / "episodes.jsonl")
    extra = trajectory.final_metrics.extra
    assert extra["reward"] == pytest.approx(episode["agent_rewards"]["llm"])
    assert extra["grade"] == pytest.approx(episode["grade"]["total"])


@pytest.fixture(scope="module")
def team_export(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The scripted role team on split-evidence (no model: derived conversations), exported."""
    folder = tmp_path_factory.mktemp("team-export")

    async def play() -> None:
        config = ServerConfig(port=0, store_path=folder / "metasre.db", grace_seconds=1.0)
        server = await build_server(config)
        await server.start()
        try:
            with SyncClient(server.address) as client:
                await asyncio.to_thread(play_team_session, client, "split-evidence", 3)
        finally:
            await server.stop(1.0)

    asyncio.run(play())
    for fmt in ("openai", "episodes", "atif"):
        _export(folder, fmt)
    return {
        "openai": _lines(folder / "openai.jsonl"),
        "episode": _lines(folder / "episodes.jsonl")[0],
        "atif": _lines(folder / "atif.jsonl"),
    }


def test_a_team_exports_one_conversation_per_seat_each_within_its_view(team_export):
    episode, lines = team_export["episode"], team_export["openai"]
    seats = {a["agent_id"]: a for a in episode["agents"]}
    assert len(lines) == len(seats) == 2
    results: dict[str, list[str]] = {a: [] for a in seats}
    for step, message in zip(
        episode["steps"], (m for m in episode["messages"] if m["role"] == "tool"), strict=True
    ):
        results[step["agent_id"]].append(message["content"])
    for line in lines:
        assert_openai_line(line)
        system, page = line["messages"][0]["content"], line["messages"][1]["content"]
        me = next(a for a in seats if f"You are {a}:" in system)
        other = next(a for a in seats if a != me)
        # The seat's own prompt (its view, never the full view) and its own page.
        assert f"What you see: services: {', '.join(seats[me]['sees']['services'])}" in system
        assert "full view" not in system
        assert page.endswith(seats[me]["page"]) and seats[me]["page"] != seats[other]["page"]
        text = "\n".join(str(m.get("content") or "") for m in line["messages"])
        own = [m["content"] for m in line["messages"] if m["role"] == "tool"]
        assert own == results[me]
        for result in results[other]:  # a teammate's results never, unless it said them
            if len(result) > 60 and result not in own:
                assert result not in text, (me, result[:80])
        heard = [m for m in line["messages"][2:] if m["role"] == "user"]
        assert heard and all(m["content"].startswith(f"Message from {other}:") for m in heard)
    for document in team_export["atif"]:
        atif.Trajectory.model_validate(document)


def test_bad_export_flags_are_one_line_errors(llm_run, capsys):
    store = str(llm_run["folder"] / "metasre.db")
    missing = str(llm_run["folder"] / "nowhere.jsonl")
    args = ["export", "--store", store, "--format", "openai", "--out", "-"]
    assert main([*args, "--transcripts", missing]) == 2
    assert "--transcripts" in capsys.readouterr().err
    assert main(["export", "--store", missing, "--format", "hf", "--out", "-"]) == 6
    assert "no trajectory store" in capsys.readouterr().err
