"""The views themselves: every tool declares what a view must show for it, and the refusals and
cuts follow from those traits alone (`metasre.simulator.views`)."""

from __future__ import annotations

import pytest

from metasre.simulator import TOOLS, Episode, resolve
from metasre.simulator.views import FULL, SYSTEMS, View, observe, owners_of, refusal

NAMING = ("service", "queue", "flag")
"""Argument names that aim a call at a service or at something one owns."""


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_every_argument_naming_a_service_is_declared(tool):
    """A tool added later that names a service but forgets the trait would leak past views."""
    fields = set(TOOLS[tool].args.model_fields)
    assert {n for n in NAMING if n in fields} == set(TOOLS[tool].service_args)
    assert set(TOOLS[tool].needs) <= set(SYSTEMS)


def test_the_code_tools_need_the_code_view():
    code = {"list_files", "view_file", "edit_lines", "git_log", "git_show", "git_blame",
            "git_diff", "run_tests"}  # fmt: skip
    assert {t.name for t in TOOLS.values() if "code" in t.needs} == code
    assert {t.name for t in TOOLS.values() if "deploys" in t.needs} == {"rollback_deployment"}
    assert {t.name for t in TOOLS.values() if "data" in t.needs} == {"rollback_migration"}
    assert {t.name for t in TOOLS.values() if t.gives_hints} == {"ask_hint"}


def test_the_full_view_refuses_nothing_and_cuts_nothing():
    episode = Episode.make("meta-sre/payment-bad-deploy-v2", 0)
    owners = owners_of(episode.instance.spec)
    for tool in TOOLS.values():
        assert refusal(FULL, tool, {"service": "anything"}, owners) == ""
    observation = episode.observation()
    assert observe(FULL, observation) is observation
    assert FULL.full and not View(code=False).full


def test_a_view_cuts_no_world_state_only_what_its_caller_is_shown():
    """The same calls under a restricted view and under the full view leave the same world."""
    sid = "meta-sre/payment-bad-deploy-v2"
    spec = resolve(sid).spec(0)
    narrow = View(services=(spec.ground_truth.service,), code=False)
    a, b = Episode.make(sid, 0), Episode.make(sid, 0)
    for tool, args in [("get_alerts", {}), ("check_dependencies", {}), ("get_events", {})] + [
        (s.tool, dict(s.args)) for s in spec.solution
    ]:
        one = a.apply("x", tool, args, narrow)
        two = b.apply("x", tool, args)
        assert (one.ok, one.clock, one.phase, one.tick) == (two.ok, two.clock, two.phase, two.tick)
    assert a.grade() == b.grade()


def test_describe_names_what_a_view_shows_and_hides():
    assert View().describe().startswith("full view")
    text = View(services=("a", "b"), deploys=False).describe()
    assert "a, b" in text and "deploys" in text and "code" not in text


def test_every_grade_component_has_words_for_a_restricted_seat():
    """A seat that does not see everything is told what each component measures (the grader's
    `MEASURES`) with its score: a component the table lacks would be told by its bare name."""
    from metasre.simulator import Episode, resolve
    from metasre.simulator.grader import MEASURES, WEIGHTS

    assert set(WEIGHTS) <= set(MEASURES)
    scenario = "meta-sre/payment-bad-deploy-v2"
    spec = resolve(scenario).spec(0)
    solved = Episode.make(scenario, 0)
    for step in spec.solution:
        solved.apply("a", step.tool, dict(step.args))
    # a hint, an operation the incident did not need, and a wrong report
    wrong = Episode.make(scenario, 0)
    other = next(s.name for s in spec.services if s.name != spec.ground_truth.service)
    wrong.apply("a", "ask_hint", {})
    wrong.apply("a", "restart_service", {"service": other})
    report = dict(next(s.args for s in spec.solution if s.tool == "submit_report"))
    wrong.apply("a", "submit_report", {**report, "root_cause_service": other})
    names = {c.name for e in (solved, wrong) for c in e.grade().components}
    assert {"hints", "unneeded_operations", "soak"} <= names
    assert names <= set(MEASURES), names - set(MEASURES)
