"""The family engine: structural axes in stratified cycles, `when`, patch commits, retired ids,
and the count of distinct ground truths. Built on a small family written here, in a temporary
folder, so that each mechanism is seen alone; the registered families prove it at scale
(test_scenario_conformance)."""

from __future__ import annotations

import textwrap
from collections import Counter
from pathlib import Path

import pytest

from metasre.simulator import resolve, scenario_ids
from metasre.simulator.scenarios.errors import InvalidScenarioError, UnknownScenarioError
from metasre.simulator.scenarios.family import ground_truth_key
from metasre.simulator.scenarios.loader import load_instance, load_spec, read_retired_ids
from metasre.simulator.scenarios.registry import _entries
from metasre.simulator.scenarios.render import draw_variants, truthy

SITES = ("alpha", "beta", "gamma", "delta", "epsilon")

SCENARIO = """
id = "test/tiny-family-v1"
title = "tiny"
severity = "P2"
difficulty = "{{site.difficulty}}"
description = "The {{site.name}} module fails."
sla_minutes = 30
step_budget = 20
seed_varies = ["which module breaks"]

[variables]
author = ["ann@team", "bo@team"]

[[variants.site]]
name = "alpha"
difficulty = "easy"
cache = true
[[variants.site]]
name = "beta"
difficulty = "easy"
cache = false
[[variants.site]]
name = "gamma"
difficulty = "medium"
cache = true
[[variants.site]]
name = "delta"
difficulty = "hard"
cache = false
[[variants.site]]
name = "epsilon"
difficulty = "hard"
cache = true

[[services]]
name = "app"
code_dir = "app"
depends_on = ["cache", "db"]
[[services]]
name = "cache"
when = "{{site.cache}}"
[[services]]
name = "db"

[[faults]]
kind = "code"
service = "app"
onset_minutes_ago = 10
[faults.effects.app]
error_rate = 0.5
[[faults.logs]]
service = "app"
lines = ["ValueError in {{site.name}}"]
[[faults.logs]]
service = "cache"
when = "{{site.cache}}"
lines = ["cache evictions high"]

[ground_truth]
service = "app"
location = "app/{{site.name}}.py"
lines = [2, 2]
category = "code_bug"
remediation = "code_fix"

[hidden]
fail_to_pass = ["hidden/probes.py::check_{{site.name}}"]

[[solution]]
tool = "submit_report"
args.root_cause_service = "app"
args.root_cause_location = "app/{{site.name}}.py"
args.category = "code_bug"
args.remediation = "code_fix"
args.summary = "fixed {{site.name}}"
"""


def _family(root: Path, *, bug_find: str = "return x + 1", extra: str = "") -> Path:
    folder = root / "tiny_family"
    (folder / "hidden").mkdir(parents=True)
    (folder / "scenario.toml").write_text(SCENARIO + extra)
    (folder / "hidden" / "probes.py").write_text(
        "".join(f"def check_{s}():\n    return {{'ok': 1}}\n" for s in SITES)
    )
    init = folder / "history" / "01-initial"
    init.mkdir(parents=True)
    (init / "commit.toml").write_text('author = "ann@team"\nmessage = "init"\nminutes_ago = 900\n')
    for s in SITES:
        (init / "app").mkdir(exist_ok=True)
        (init / "app" / f"{s}.py").write_text(f"def {s}(x):\n    return x + 1\n")
    bug = folder / "history" / "02-the-bug"
    bug.mkdir()
    (bug / "commit.toml").write_text(
        textwrap.dedent(
            f"""\
            author = "{{{{author}}}}"
            message = "tune {{{{site.name}}}}"
            minutes_ago = 10
            [[patch]]
            path = "app/{{{{site.name}}}}.py"
            find = "{bug_find}"
            replace = "return x - 1"
            """
        )
    )
    optional = folder / "history" / "03-cache-warmup"
    optional.mkdir()
    (optional / "commit.toml").write_text(
        'author = "bo@team"\nmessage = "warm the cache"\nminutes_ago = 5\nwhen = "{{site.cache}}"\n'
    )
    (optional / "app").mkdir()
    (optional / "app" / "warmup.py").write_text("WARM = True\n")
    return folder


def test_an_axis_is_walked_in_stratified_cycles() -> None:
    axis = {"site": [{"name": s} for s in SITES]}
    picks = [draw_variants("test/x-v1", seed, axis)["site"]["name"] for seed in range(20)]
    for cycle in range(4):
        assert sorted(picks[cycle * 5 : cycle * 5 + 5]) == sorted(SITES), picks
    # Each cycle is its own shuffle, so a seed's structure does not fix the next cycle's order.
    orders = {tuple(picks[c * 5 : c * 5 + 5]) for c in range(4)}
    assert len(orders) > 1
    # A seed's structure recurs exactly once per cycle: 1/n of the seeds.
    assert Counter(picks)[picks[0]] == 4
    # Deterministic, and independent per family id.
    assert picks == [draw_variants("test/x-v1", s, axis)["site"]["name"] for s in range(20)]
    other = [draw_variants("test/y-v1", s, axis)["site"]["name"] for s in range(20)]
    assert other != picks


def test_bad_axes_are_refused_with_the_axis_named() -> None:
    with pytest.raises(ValueError, match="'site'"):
        draw_variants("test/x-v1", 0, {"site": []})


@pytest.mark.parametrize(
    ("value", "kept"),
    [
        (True, True),
        (False, False),
        ("false", False),
        ("False", False),
        ("", False),
        ("0", False),
        ("no", False),
        ("none", False),
        ("yes", True),
        ("inventory", True),
        (0, False),
        (2, True),
    ],
)
def test_when_words(value: object, kept: bool) -> None:
    assert truthy(value) is kept


def test_the_seed_chooses_the_structure_and_the_answer_key_follows(tmp_path: Path) -> None:
    folder = _family(tmp_path)
    seen = {}
    for seed in range(10):
        inst = load_instance(folder, seed)
        site = inst.values["site"]["name"]
        seen[seed] = site
        spec = inst.spec
        assert spec.ground_truth.location == f"app/{site}.py"
        assert spec.hidden.fail_to_pass == (f"hidden/probes.py::check_{site}",)
        assert spec.difficulty == inst.values["site"]["difficulty"]
        # the patch landed in the chosen file only, and blame names the bug commit
        files = inst.tree.files
        assert files[f"app/{site}.py"] == f"def {site}(x):\n    return x - 1\n"
        assert all(files[f"app/{s}.py"].endswith("x + 1\n") for s in SITES if s != site)
        blame = inst.tree.blame(f"app/{site}.py")
        assert blame[1].message == f"tune {site}" and blame[0].message == "init"
        # `when`: the cache service, its edge, its log block and its commit exist together
        has_cache = bool(inst.values["site"]["cache"])
        names = {s.name for s in spec.services}
        assert ("cache" in names) is has_cache
        assert spec.service("app").depends_on == (("cache", "db") if has_cache else ("db",))
        assert len(spec.faults[0].logs) == (2 if has_cache else 1)
        assert ("app/warmup.py" in files) is has_cache
        assert ground_truth_key(spec) == ground_truth_key(load_spec(folder, seed))
    assert set(seen.values()) == set(SITES)


def test_a_patch_that_does_not_find_its_text_exactly_once_is_refused(tmp_path: Path) -> None:
    folder = _family(tmp_path, bug_find="return x * 3")
    with pytest.raises(InvalidScenarioError, match=r"exactly once, found it 0 times"):
        load_instance(folder, 0)


def test_a_patch_of_a_missing_file_is_refused(tmp_path: Path) -> None:
    folder = _family(tmp_path)
    commit = folder / "history" / "02-the-bug" / "commit.toml"
    commit.write_text(commit.read_text().replace('path = "app/', 'path = "nowhere/'))
    with pytest.raises(InvalidScenarioError, match="not in the tree"):
        load_instance(folder, 0)


def test_rendering_a_new_seed_is_fast(tmp_path: Path) -> None:
    """Only a smoke bound here (CI machines are noisy); bench/ measures it side by side."""
    import time

    folder = _family(tmp_path)
    start = time.perf_counter()
    for seed in range(100, 110):
        load_instance(folder, seed)
    assert (time.perf_counter() - start) / 10 < 0.5


def test_retired_ids_get_an_error_naming_their_family() -> None:
    retired = {old: e.id for e in _entries().values() for old in read_retired_ids(e.folder)}
    if not retired:
        pytest.skip("no family retires an id yet")
    for old, successor in retired.items():
        assert old not in scenario_ids()
        with pytest.raises(UnknownScenarioError, match="retired") as caught:
            resolve(old)
        assert successor in str(caught.value)
        # the unversioned name reaches the family
        name = old.rsplit("-v", 1)[0]
        assert resolve(name).id == successor
