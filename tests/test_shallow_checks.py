"""Shallow policies, splits and symptom-first families: validate's proof that a family must be
investigated, through the same code `metasre validate` runs."""

import json
import subprocess
import sys
from collections import Counter
from typing import Any

import pytest

from metasre.agents.policies.shallow import revert
from metasre.conformance import EpisodeCaller
from metasre.conformance.validate import ScenarioVerdict, check_shallow
from metasre.simulator import Episode, resolve, scenario_ids
from metasre.simulator.scenarios.loader import load_instance, load_spec, split_axis, structure
from metasre.simulator.scenarios.mix import cause_of
from metasre.simulator.scenarios.splits import in_split, split_of, split_seeds


@pytest.mark.parametrize("scenario_id", scenario_ids())
def test_no_structure_of_the_test_split_occurs_in_training(scenario_id):
    entry = resolve(scenario_id)
    seen = {"train": set(), "test": set()}
    for seed in range(200):
        inst_key = (entry.mix and resolve_cause(entry, seed)) or structure(entry.folder, seed)
        seen[split_of(entry, seed)].add(inst_key)
    assert seen["test"] and seen["train"], "a family needs seeds in both splits"
    assert not seen["test"] & seen["train"]


def resolve_cause(entry, seed):
    """A mix's structure: its cause and that cause's split-axis table."""
    from metasre.simulator.scenarios.mix import cause_of

    folder, cseed = cause_of(entry.mix, seed)
    axis, _, _ = split_axis(folder)
    return (folder.name, dict(structure(folder, cseed))[axis])


def test_split_seeds_are_the_first_seeds_of_their_split():
    entry = resolve("payment-bad-deploy")
    test = split_seeds(entry, "test", 10)
    assert test == in_split(entry, range(test[-1] + 1), "test")
    assert len(test) == 10 and all(entry.is_test(s) for s in test)
    assert not set(test) & set(split_seeds(entry, "train", 60))


@pytest.mark.parametrize("scenario_id", ["payment-bad-deploy", "feature-flag-rollout"])
def test_the_shallow_checks_catch_a_family_whose_opening_names_the_answer(scenario_id):
    """The checker has teeth: on a part whose page and newest change give the remedy and its
    target away, a script that never investigates reaches the expert's grade."""
    verdict = ScenarioVerdict(resolve(scenario_id).id, [])
    check_shallow(verdict, 12)
    name, mean = verdict.shallow_best
    assert mean >= 0.9, (name, mean)
    assert len(verdict.shallow_seeds) == 12
    assert not verdict.failures  # a part is shown, not held to the bar


@pytest.mark.parametrize("scenario_id", ["ad-ranking-crash", "pii-exposure"])
def test_the_revert_scripts_catch_a_code_family_whose_culprit_is_the_newest_commit(scenario_id):
    """A family fixed in code whose bad commit is the newest one is solved by undoing the
    newest commit unread: the revert scripts find it (the old checks scored it 0.075)."""
    verdict = ScenarioVerdict(resolve(scenario_id).id, [])
    check_shallow(verdict, 10)
    name, mean = verdict.shallow_best
    assert name.startswith("revert@") and mean >= 0.9, (name, mean)


ADS = "meta-sre/ads-errors-v3"


def _code_seeds(count: int) -> list[int]:
    entry = resolve(ADS)
    return [s for s in range(count) if entry.spec(s).ground_truth.remediation == "code_fix"]


def _culprit_rank(seed: int) -> tuple[int, list[dict[str, Any]]]:
    """Where the cause's own commit stands in the commit log (0: the newest)."""
    ep = Episode.make(ADS, seed)
    # The cause's own newest commit, before other teams' work was woven around it (their
    # messages are other sites' culprit messages, never this seed's).
    folder, cause_seed = cause_of(resolve(ADS).mix, seed)  # type: ignore[arg-type]
    cause = load_instance(folder, cause_seed).tree.commits
    newest = min(c.minutes_ago for c in cause if c.minutes_ago > 0)
    culprit = next(c for c in cause if c.minutes_ago == newest).message.splitlines()[0]
    commits = list(EpisodeCaller(ep, "t")("git_log", {}).data["commits"])
    theirs = [i for i, c in enumerate(commits) if c["message"].splitlines()[0] == culprit]
    return theirs[0], commits


def test_the_culprit_is_not_the_newest_commit_by_rule():
    """Other teams' commits land around the culprit: its rank in the log spreads over every
    place, so no "revert the k-th newest" rule finds it on more than a few seeds."""
    ranks = Counter(_culprit_rank(s)[0] for s in _code_seeds(60))
    total = sum(ranks.values())
    assert len(ranks) >= 5, ranks
    assert max(ranks.values()) / total <= 0.35, ranks


def test_undoing_other_teams_work_voids_the_fix():
    """The reference's fix plus a revert of one herring commit breaks a PASS_TO_PASS check,
    and a change that breaks what worked is no fix: the fix scores 0 and nothing resolves."""
    seed = _code_seeds(20)[0]
    rank, commits = _culprit_rank(seed)
    herring = next(c for i, c in enumerate(commits) if i != rank)
    for undo in (False, True):
        ep = Episode.make(ADS, seed)
        caller = EpisodeCaller(ep, "t")
        for step in ep.instance.spec.solution:
            if step.tool != "submit_report":
                caller(step.tool, dict(step.args))
        if undo:
            revert(caller, str(herring["sha"]))
        report = next(s for s in ep.instance.spec.solution if s.tool == "submit_report")
        caller("submit_report", dict(report.args))
        grade = ep.grade()
        fix = next(c.score for c in grade.components if c.name == "fix")
        assert (grade.resolved, fix) == ((False, 0.0) if undo else (True, 1.0)), grade


SYMPTOM_FIRST = [sid for sid in scenario_ids() if resolve(sid).mix is not None]


def test_the_catalogue_has_symptom_first_families():
    assert {
        "meta-sre/edge-errors-v3",
        "meta-sre/ads-errors-v3",
        "meta-sre/courier-errors-v3",
        "meta-sre/shop-errors-v4",
        "meta-sre/marketplace-slow-v4",
    } <= set(SYMPTOM_FIRST)


@pytest.mark.parametrize("scenario_id", SYMPTOM_FIRST)
def test_a_symptom_first_family_opens_the_same_way_whatever_the_cause(scenario_id):
    """Every seed's page is the mix's (only its minutes differ), only edge services page, and
    no terminal line names a mechanism; the causes behind them differ in kind."""
    entry = resolve(scenario_id)
    pages, causes, frames = set(), set(), set()
    for seed in range(15):
        ep = Episode.make(entry.id, seed)
        obs = ep.observation().to_dict()
        pages.add("".join(c for c in obs["description"] if not c.isdigit()))
        # Everything around the world's rows and alerts (title, SLA, step budget, any field
        # added later) is the family's: a cause's own SLA or budget would name the cause.
        frame = {k: v for k, v in obs.items() if k not in ("services", "alerts", "description")}
        frames.add(json.dumps(frame, sort_keys=True))
        called = {d for row in obs["services"] for d in row["depends_on"]}
        assert all(a["service"] not in called for a in obs["alerts"]), obs["alerts"]
        assert not obs["terminal"]
        assert obs["scenario_id"] == entry.id
        causes.add(ep.instance.spec.ground_truth.category)
    assert len(pages) == 1
    assert len(frames) == 1, frames
    assert len(causes) >= 2, causes


@pytest.mark.parametrize(
    "scenario_id",
    [sid for sid in SYMPTOM_FIRST if resolve(sid).mix.same_size],  # type: ignore[union-attr]
)
def test_a_symptom_first_family_runs_as_many_services_whatever_its_cause(scenario_id):
    """Causes generated apart ran platforms of their own sizes: the count named the cause."""
    entry = resolve(scenario_id)
    sizes: dict[str, set[int]] = {}
    for seed in range(30):
        spec = entry.instance(seed).spec
        sizes.setdefault(spec.ground_truth.category, set()).add(len(spec.services))
        names = {s.name for s in spec.services}
        assert all(d in names for s in spec.services for d in s.depends_on)
        cause = load_spec(*cause_of(entry.mix, seed)).services
        added = names - {s.name for s in cause}
        # The added services are inner rows someone calls, never new edges that page.
        assert added <= {d for s in spec.services for d in s.depends_on}
    assert len(sizes) >= 3
    every = set().union(*sizes.values())
    assert max(every) - min(every) <= 2, sizes


@pytest.mark.parametrize("scenario_id", SYMPTOM_FIRST)
def test_the_expert_solves_a_symptom_first_family_by_investigating(scenario_id):
    from metasre.agents.policies import ExpertPolicy

    entry = resolve(scenario_id)
    for seed in split_seeds(entry, "test", 6):
        ep = Episode.make(entry.id, seed)
        caller = EpisodeCaller(ep)
        ExpertPolicy().play(caller, ep.observation().to_dict())
        assert ep.grade().total >= 0.9
        assert caller.calls > 3  # it looked before it acted


def _metasre(*args):
    return subprocess.run(
        [sys.executable, "-m", "metasre.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_validate_takes_a_split_and_shows_the_shallow_figures():
    out = _metasre(
        "validate",
        "payment-bad-deploy",
        "--seeds",
        "0-7",
        "--split",
        "test",
        "--random-seeds",
        "0-1",
        "--shallow-seeds",
        "4",
        "--json",
    )
    assert out.returncode == 0, out.stderr
    [report] = json.loads(out.stdout)
    entry = resolve("payment-bad-deploy")
    assert report["seeds"] == in_split(entry, range(8), "test")
    assert report["shallow_script_best"][1] >= 0.9 and report["symptom_first"] is False


def test_a_bad_split_is_a_usage_error():
    out = _metasre("validate", "--split", "holdout")
    assert out.returncode == 2 and "invalid choice" in out.stderr and "Traceback" not in out.stderr
