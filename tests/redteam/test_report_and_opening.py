"""Red team of issue 25: a report cannot stand in for the fix, and the opening names no cause.

- The report: the true answer, filed from the opening with nothing done, is the most a report
  written without investigating can claim; it must stay at or below 0.2 (the diagnosis is
  halved without a working fix, the remediation counts only when done).
- The opening: everything a policy reads before it investigates, the page, the alerts, the
  terminal and the tools' descriptions, names neither the cause's site (flag, key, migration,
  certificate, file) nor its category; the root's name appears only where it pages. (The tools'
  descriptions are the same for every seed: clean_disk's names `log_level`, the key of every
  disk-full cause, which tells the remedy's second step but not which seed's cause it is.)
"""

from __future__ import annotations

import json

import pytest

from metasre.conformance import EpisodeCaller
from metasre.simulator import Episode, resolve
from metasre.simulator.report import normalize_location

from .shallow_play import SHALLOW_MAX, SYMPTOM_FIRST, held_out


@pytest.mark.parametrize("scenario_id", SYMPTOM_FIRST)
def test_the_true_report_filed_from_the_opening_earns_at_most_0_2(scenario_id):
    for seed in held_out(scenario_id):
        ep = Episode.make(scenario_id, seed)
        truth = ep.instance.spec.ground_truth
        reply = EpisodeCaller(ep, "shallow")(
            "submit_report",
            {
                "root_cause_service": truth.service,
                "root_cause_location": truth.location,
                "category": truth.category,
                "remediation": truth.remediation,
                "summary": truth.summary[:2000],
            },
        )
        assert reply.ok, reply.text
        grade = ep.grade()
        assert grade.total <= SHALLOW_MAX, (seed, grade.total, grade.components)
        assert not grade.resolved


def _site(location: str) -> str | None:
    """The named thing a location points at (a flag, key, migration, certificate, file)."""
    kind, _, name = normalize_location(location).partition(":")
    if kind == "service" or not name:
        return None
    return name if kind in ("flag", "config", "migration", "certificate", "queue") else location


@pytest.mark.parametrize("scenario_id", SYMPTOM_FIRST)
def test_the_opening_and_the_tools_name_no_cause(scenario_id):
    entry = resolve(scenario_id)
    for seed in held_out(scenario_id, 30):
        ep = Episode.make(scenario_id, seed)
        obs = ep.observation().to_dict()
        truth = ep.instance.spec.ground_truth
        text = " ".join(
            [
                str(obs.get("title", "")),
                str(obs.get("description", "")),
                *(json.dumps(a) for a in obs.get("alerts", ())),
                *(str(t) for t in obs.get("terminal", ())),
            ]
        ).lower()
        site = _site(truth.location)
        if site is not None:
            assert site.lower() not in text, (seed, site)
        assert truth.category.replace("_", " ") not in text, (seed, truth.category)
        pagers = {str(a.get("service")) for a in obs.get("alerts", ())}
        if truth.service not in pagers:
            assert truth.service.lower() not in text, (seed, truth.service)
    assert entry.mix is not None


def _read_everything(caller: EpisodeCaller, observation: dict) -> list[str]:
    """Every read-only tool, on every service and the code's top files: all it says."""
    said = []

    def call(tool: str, args: dict) -> None:
        reply = caller(tool, args)
        said.append(reply.text + json.dumps(reply.data, default=str))

    for tool in ("get_alerts", "get_events", "git_log", "list_files", "run_tests"):
        call(tool, {"path": ""} if tool == "list_files" else {})
    for row in observation.get("services", ()):
        for tool in ("read_logs", "describe_service", "get_config", "check_dependencies"):
            call(tool, {"service": row["name"]})
    entries = caller("list_files", {"path": ""}).data.get("entries", ())
    for entry in [e for e in entries if not str(e).endswith("/")][:10]:
        call("view_file", {"path": str(entry)})
    return said


@pytest.mark.parametrize("scenario_id", SYMPTOM_FIRST)
def test_no_hidden_check_reaches_the_agent(scenario_id):
    """Whatever an agent reads, no hidden check's file or name shows (the grader's probes run
    only after the end)."""
    for seed in held_out(scenario_id, 4):
        ep = Episode.make(scenario_id, seed)
        hidden = ep.instance.spec.hidden
        secret = {c.rpartition("::")[2] for c in (*hidden.fail_to_pass, *hidden.pass_to_pass)}
        secret |= set(ep.instance.hidden_files)
        said = "\n".join(_read_everything(EpisodeCaller(ep, "reader"), ep.observation().to_dict()))
        assert "hidden/" not in said
        shown = {s for s in secret if s and s in said}
        assert not shown, (seed, sorted(shown)[:5])
