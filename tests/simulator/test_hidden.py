"""Hidden checks: what a grader run reports, how the trusted side judges it, who may run it."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from metasre.simulator import Episode, sandbox
from metasre.simulator.hidden import GUESSES, canonical, guessable

SERVICE = b"def double(x):\n    return 2 * x\n"
PROBES = b"""
import asyncio
from svc import double

def plain():
    return {"b": [double(1), double(2)], "a": round(1 / 3, 6)}

def raises():
    return {}["missing"]

async def awaited():
    await asyncio.sleep(0)
    return [double(21)]

def not_json():
    return {1, 2}

def not_finite():
    return float("nan")

def huge():
    return "x" * 100_000
"""
FILES = {"svc/__init__.py": SERVICE, "hidden/probes.py": PROBES}


@pytest.fixture(scope="module")
def grader() -> Iterator[sandbox.ForkServerRunner]:
    with sandbox.ForkServerRunner(purpose="grader") as runner:
        yield runner


def test_a_grader_run_reports_only_observations(grader: sandbox.ForkServerRunner) -> None:
    names = ["plain", "raises", "awaited", "not_json", "not_finite", "huge", "absent"]
    report = grader.observe(FILES, "hidden/probes.py", names)
    assert report.status == "completed", report.message
    seen = {name: json.loads(text) for name, text in report.observations.items()}
    assert seen == {
        "plain": {"a": 0.333333, "b": [2, 4]},
        "raises": {"raised": "KeyError"},
        "awaited": [42],
        "not_json": {"unserialisable": "set"},
        "not_finite": {"unserialisable": "float"},
        "huge": {"too_long": 100_002},
        "absent": {"raised": "AttributeError"},
    }
    assert not hasattr(report, "output")  # nothing a grader run prints is kept anywhere


def test_runners_keep_to_their_purpose(grader: sandbox.ForkServerRunner) -> None:
    with pytest.raises(sandbox.WrongRunnerError, match="grader runs only"):
        grader.run({"tests/test_a.py": b"def test_a():\n    pass\n"}, ["tests/test_a.py"])
    with sandbox.ForkServerRunner() as visible, pytest.raises(sandbox.WrongRunnerError):
        visible.observe(FILES, "hidden/probes.py", ["plain"])
    with pytest.raises(sandbox.WrongRunnerError):
        sandbox.default_runner().inner.observe(FILES, "hidden/probes.py", ["plain"])  # type: ignore[attr-defined]


def test_a_probe_module_that_fails_to_import_observes_nothing(
    grader: sandbox.ForkServerRunner,
) -> None:
    broken = {**FILES, "svc/__init__.py": b"raise SystemExit(0)\n"}
    report = grader.observe(broken, "hidden/probes.py", ["plain"])
    assert report.status == "collection_error"
    assert report.observations == {}


def test_canonical_json_and_blind_guesses() -> None:
    assert canonical('{"b": 1, "a": [1.0, "x"]}') == '{"a":[1.0,"x"],"b":1}'
    assert canonical("not json") is None and canonical(None) is None
    for blind in ("null", "true", "200", "{}", '{"raised":"KeyError"}', '{"status":200}'):
        assert guessable(canonical(blind) or "")
    assert not guessable('{"order":["ad-2","ad-1"],"status":200}')
    assert all(canonical(g) == g for g in GUESSES)


@pytest.mark.parametrize(
    "scenario",
    [
        "meta-sre/ad-ranking-crash-v1",
        "meta-sre/db-connection-leak-v1",
        "meta-sre/pii-exposure-v1",
        "meta-sre/timestamp-corruption-v1",
    ],
)
def test_code_checks_flip_with_the_reference_fix_and_no_f2p_is_guessable(scenario: str) -> None:
    ep = Episode.make(scenario, 1)
    spec = ep.instance.spec
    start = ep.code_checks()
    assert not any(start[c] for c in spec.hidden.fail_to_pass)
    assert all(start[c] for c in spec.hidden.pass_to_pass)
    assert ep.guessable_checks() == []
    ep.play_steps([s for s in spec.solution if s.tool != "submit_report"])
    assert all(ep.code_checks().values())
