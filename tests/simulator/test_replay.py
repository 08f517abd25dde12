"""The one replay: exact for recovery and validation, by content for counterfactual credit."""

from __future__ import annotations

from typing import Any

from metasre.simulator import Episode
from metasre.simulator.replay import RecordedCall, replay

AD = "meta-sre/ad-ranking-crash-v2"
RANKER = "ad_ranking/ranker.py"
SEED = 11
"""A seed whose bug is one line of ad_ranking/ranker.py (a feature row read as an object)."""


def _play(calls: list[tuple[str, str, dict[str, Any]]]) -> tuple[Episode, list[RecordedCall]]:
    ep = Episode.make(AD, SEED)
    recorded = []
    for agent, tool, args in calls:
        step = ep.apply(agent, tool, args)
        recorded.append(
            RecordedCall(
                agent_id=agent,
                tool=tool,
                args=dict(step.args),
                round=0,
                patch=step.output.patch,
            )
        )
    return ep, recorded


def _fix_line(ep: Episode) -> int:
    fault = ep.instance.values["fault"]
    assert fault["file"] == RANKER, "the family changed: pick another SEED"
    line = ep.workspace.find_line(RANKER, str(fault["bug"]).strip())
    assert line is not None
    return line


def _fix(ep: Episode) -> dict[str, Any]:
    args = dict(ep.instance.spec.solution[0].args)
    line = _fix_line(ep)
    return {**args, "start_line": line, "end_line": line}


def _rider(n: int) -> tuple[str, str, dict[str, Any]]:
    comment = {"path": RANKER, "action": "insert", "start_line": 1, "content": f"# note {n}"}
    return ("rider", "edit_lines", comment)


def _after_rider() -> Episode:
    ep = Episode.make(AD, SEED)
    ep.apply(*_rider(0))
    return ep


def test_an_exact_replay_rebuilds_the_same_episode() -> None:
    calls = [_rider(0), ("fixer", "edit_lines", _fix(_after_rider()))]
    original, recorded = _play(calls)
    again = Episode.make(AD, SEED)
    assert replay(again, recorded) == []
    assert again.workspace.snapshot() == original.workspace.snapshot()
    assert again.grade() == original.grade()


def test_by_content_an_edit_goes_where_its_context_is_not_where_its_number_was() -> None:
    riders = [_rider(n) for n in range(8)]
    shifted = Episode.make(AD, SEED)
    for call in riders:
        shifted.apply(*call)
    _, recorded = _play([*riders, ("fixer", "edit_lines", _fix(shifted))])
    without_rider = [c for c in recorded if c.agent_id != "rider"]

    exact = Episode.make(AD, SEED)
    replay(exact, without_rider)
    by_content = Episode.make(AD, SEED)
    assert replay(by_content, without_rider, by_content=True) == []

    alone = Episode.make(AD, SEED)
    alone.apply("fixer", "edit_lines", _fix(alone))
    assert by_content.workspace.read(RANKER) == alone.workspace.read(RANKER)
    assert by_content.grade().fail_to_pass == alone.grade().fail_to_pass
    assert exact.workspace.read(RANKER) != alone.workspace.read(RANKER)  # the old way missed


def test_an_edit_whose_context_is_gone_is_reported_not_forced() -> None:
    # the fixer rewrites the rider's own line: without the rider there is nothing to rewrite
    target = {"path": RANKER, "action": "replace", "start_line": 1, "end_line": 1}
    _, recorded = _play([_rider(0), ("fixer", "edit_lines", {**target, "content": "# mine"})])
    kept = [c for c in recorded if c.agent_id != "rider"]
    fresh = Episode.make(AD, SEED)
    skipped = replay(fresh, kept, by_content=True)
    assert [c.agent_id for c in skipped] == ["fixer"]
    assert fresh.workspace.read(RANKER) == Episode.make(AD, SEED).workspace.read(RANKER)
