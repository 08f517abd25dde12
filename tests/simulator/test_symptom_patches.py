"""Red team: the symptom patches an attacker tries on every family whose remedy is a code fix.

Each patch is what an agent that read the logs, the code and the production traffic (its
requests show in the services' logs) but not the hidden checks would write to make the errors
stop without fixing the bug, applied with ``edit_lines`` to the file(s) the reference fix
changes, then the accurate report is filed (the strongest case). Every patch grades at most
0.2 and is not resolved:

* swallow the error: every function and method of the file wrapped to return None instead of
  raising;
* drop the validation: every ``raise`` of the file turned into ``pass``;
* detect the grader / special-case the traffic: the reference fix itself, switched on only
  when the run serves the production traffic (the module at the probe path declares
  ``REQUESTS``). The world reacts to it as to a fix (the traffic is served, the fault is
  cured, the dense reward pays), and the hidden checks, run once at the end, still refuse it:
  the cure relapses in the reward (net zero) and in the grade (no SLA credit);
* the same patch keyed on the traffic's own inputs instead (the fix switched on only for the
  ids and values its request lines show) where the family's fault file reads them.

It also checks that every family with a code fault ships production traffic that its start
fails and its reference serves (on the seeds these tests play).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from metasre.simulator import Episode
from metasre.simulator.episode import StepResult
from metasre.simulator.scenarios.registry import resolve, scenario_ids
from metasre.simulator.traffic import requests_of

CODE_FAMILIES = (
    ("ad-ranking-crash", 10),
    ("db-connection-leak", 4),
    ("dependency-bump", 11),
    ("pii-exposure", 6),
    ("timestamp-corruption", 3),
)
MAX_GRADE = 0.2


def _truth_report(episode: Episode) -> dict[str, Any]:
    truth = episode.instance.spec.ground_truth
    return {
        "root_cause_service": truth.service,
        "root_cause_location": truth.location,
        "category": truth.category,
        "remediation": truth.remediation,
        "summary": f"{truth.service}: {truth.location} fixed; the errors stopped.",
    }


def _fixed_files(scenario: str, seed: int) -> dict[str, tuple[str, str]]:
    """Path -> (the start's text, the reference fix's text) of each .py file the fix edits."""
    reference = Episode.make(scenario, seed)
    start = Episode.make(scenario, seed)
    edits = [s for s in reference.instance.spec.solution if s.tool == "edit_lines"]
    reference.play_steps(edits)
    paths = dict.fromkeys(str(s.args["path"]) for s in edits if str(s.args["path"]).endswith(".py"))
    return {p: (start.workspace.read(p), reference.workspace.read(p)) for p in paths}


def _swallow(source: str, _fixed: str) -> str:
    return source + (
        "\n\ndef _rt_swallow(_g=globals()):\n"
        "    import functools, inspect\n"
        "    def wrap(f):\n"
        "        if inspect.iscoroutinefunction(f):\n"
        "            @functools.wraps(f)\n"
        "            async def w(*a, **k):\n"
        "                try:\n"
        "                    return await f(*a, **k)\n"
        "                except Exception:\n"
        "                    return None\n"
        "            return w\n"
        "        @functools.wraps(f)\n"
        "        def w(*a, **k):\n"
        "            try:\n"
        "                return f(*a, **k)\n"
        "            except Exception:\n"
        "                return None\n"
        "        return w\n"
        "    for name, value in list(_g.items()):\n"
        "        if inspect.isfunction(value) and value.__module__ == _g['__name__']:\n"
        "            _g[name] = wrap(value)\n"
        "        elif inspect.isclass(value) and value.__module__ == _g['__name__']:\n"
        "            for attr, member in list(vars(value).items()):\n"
        "                if inspect.isfunction(member):\n"
        "                    setattr(value, attr, wrap(member))\n"
        "_rt_swallow()\n"
    )


def _drop_validation(source: str, _fixed: str) -> str:
    return re.sub(r"^(\s*)raise\b.*$", r"\1pass", source, flags=re.M)


def _traffic_only(source: str, fixed: str) -> str:
    # the fixed code, but only where the production traffic is served
    return source + (
        "\n\ntry:\n"
        "    with open('traffic/replay.py', encoding='utf-8') as _rt_file:\n"
        "        _rt_traffic = 'REQUESTS' in _rt_file.read()\n"
        "except OSError:\n"
        "    _rt_traffic = False\n"
        "if _rt_traffic:\n"
        f"    exec(compile({fixed!r}, __file__, 'exec'), globals())\n"
    )


PATCHES: dict[str, Callable[[str, str], str]] = {
    "swallow-the-error": _swallow,
    "drop-the-validation": _drop_validation,
    "detect-the-grader": _traffic_only,
}


def _play(scenario: str, seed: int, patch: Callable[[str, str], str]) -> list[StepResult]:
    episode = Episode.make(scenario, seed)
    steps = []
    for path, (source, fixed) in _fixed_files(scenario, seed).items():
        patched = patch(source, fixed)
        lines = len(source.splitlines())
        steps.append(
            episode.apply(
                "red",
                "edit_lines",
                {
                    "path": path,
                    "action": "replace",
                    "start_line": 1,
                    "end_line": lines,
                    "content": patched,
                },
            )
        )
        assert steps[-1].ok, steps[-1].output.text
    steps.append(episode.apply("red", "submit_report", _truth_report(episode)))
    assert steps[-1].done
    return steps


@pytest.mark.parametrize("patch", sorted(PATCHES))
@pytest.mark.parametrize(("scenario", "seed"), CODE_FAMILIES, ids=[f for f, _ in CODE_FAMILIES])
def test_a_symptom_patch_grades_at_most_0_2(scenario: str, seed: int, patch: str) -> None:
    steps = _play(scenario, seed, PATCHES[patch])
    grade = steps[-1].grade
    assert grade is not None and grade.final
    assert grade.total <= MAX_GRADE, (patch, grade.components)
    assert not grade.resolved
    assert grade.component("fix").score < 1.0
    # whatever the world showed during the episode, the cure did not hold: shaping nets zero
    shaping = sum(
        value
        for step in steps
        for name, value in step.reward.components.items()
        if name.startswith("fault_")
    )
    assert shaping <= 1e-9, [dict(s.reward.components) for s in steps]
    if patch == "detect-the-grader":
        # the world reacted as to a fix: the traffic was served and the fault cured ...
        assert any("fault_cured" in s.reward.components for s in steps[:-1])
        # ... and the end took it back, and the SLA pays nothing for it
        assert steps[-1].reward.components.get("fault_relapsed") == pytest.approx(-0.2)
        assert grade.component("sla").score == 0.0


@pytest.mark.parametrize(("scenario", "seed"), CODE_FAMILIES, ids=[f for f, _ in CODE_FAMILIES])
def test_the_reference_fix_still_resolves_and_cures_through_the_traffic(
    scenario: str, seed: int
) -> None:
    episode = Episode.make(scenario, seed)
    steps = [episode.apply("ref", s.tool, dict(s.args)) for s in episode.instance.spec.solution]
    assert steps[-1].grade is not None and steps[-1].grade.resolved
    assert steps[-1].grade.total >= 0.9
    assert any("fault_cured" in s.reward.components for s in steps)
    assert "fault_relapsed" not in steps[-1].reward.components


def test_every_code_family_ships_production_traffic() -> None:
    families = []
    for scenario in scenario_ids():
        spec = resolve(scenario).instance(0).spec
        if any(f.kind == "code" for f in spec.faults):
            families.append(scenario)
            assert requests_of(resolve(scenario).instance(0)), scenario
    assert len(families) >= 5, families
