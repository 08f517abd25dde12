"""Three generalists for a scenario without roles: a commander, an investigator and a fixer.

The commander triages from the page (alerts, the dashboard's health and dependencies) and hands
the investigation over at once; the investigator follows the logs to the root cause and sends its
diagnosis to the fixer and the commander; the fixer applies the remedy for that kind of failure,
proves it, and says so; meanwhile the commander watches the diagnosed service's errors, then
files the report. Each role holds its own seat and runs on its own thread. Under FREE_FOR_ALL
their calls interleave as they would for three people; under ROUND_ROBIN and SIMULTANEOUS each
call waits for its seat's turn, and a role waiting for a teammate spends its turns on the looks
it will need anyway (the investigator reads the paged services' logs, the fixer describes them)
instead of stalling the round.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..expert import Diagnosis, ExpertPolicy
from .board import CUE_CHARS, brief, heard, say
from .callers import Look, TeamCaller, looks, on_threads

ROLES = ("commander", "investigator", "fixer")


def _paged(observation: Mapping[str, Any]) -> list[str]:
    """The services the pager names, in the order it names them."""
    return list(dict.fromkeys(str(a["service"]) for a in observation.get("alerts", ())))


def commander(call: TeamCaller, observation: Mapping[str, Any], ids: Mapping[str, str]) -> None:
    """Triage, hand the investigation over, wait for the fix, file the report."""
    # The page already shows the dashboard (health, dependencies) and the alerts: hand the
    # investigation over at once, so that nobody waits on the commander's own reads.
    graph = [
        {"service": r["name"], "health": r["health"], "depends_on": list(r["depends_on"])}
        for r in observation.get("services", ())
    ] or list(call("check_dependencies", {}).data.get("services", ()))
    alerts = list(observation.get("alerts", ())) or list(
        call("get_alerts", {}).data.get("alerts", ())
    )
    say(
        call,
        "TRIAGE",
        {
            "graph": graph,
            "alerts": alerts,
            "terminal": list(observation.get("terminal", ())),
        },
        [ids["investigator"]],
        f"Paged: {len(alerts)} alerts firing. Investigator, find the cause.",
    )

    # While the fixer works, look once at the diagnosed service's errors (once a diagnosis is
    # in): a look every round would spend the step budget, which the grade counts.
    watched: set[str] = set()

    def watch() -> Look | None:
        found = heard(call, "DIAGNOSIS", 0.0)
        if not found or not found.get("service") or found["service"] in watched:
            return None
        watched.add(str(found["service"]))
        return ("query_metrics", {"service": found["service"], "metric": "error_rate"})

    fixed = heard(call, "FIXED", filler=watch)
    if fixed is None:
        return
    ExpertPolicy.report(call, Diagnosis(**fixed))


def investigator(call: TeamCaller, observation: Mapping[str, Any], ids: Mapping[str, str]) -> None:
    """Follow the evidence from the commander's triage to a diagnosis, and share it."""
    # Before the triage arrives, read the logs of the services the pager names: the first
    # places the diagnosis will look (the same calls, so it does not read them twice).
    triage = heard(
        call,
        "TRIAGE",
        filler=looks(
            [
                ("read_logs", {"service": s, "level": "WARN", "lines": 80})
                for s in _paged(observation)
            ]
        ),
    )
    if triage is None:
        return
    health = {r["service"]: r["health"] for r in triage["graph"]}
    deps = {r["service"]: list(r["depends_on"]) for r in triage["graph"]}
    found = ExpertPolicy().diagnose(call, health, deps, triage["alerts"], triage["terminal"])
    body = (
        {
            "service": found.service,
            "category": found.category,
            "cue": found.cue[:CUE_CHARS],
            "evidence": brief(found.evidence),
        }
        if found
        else {}
    )
    note = (
        f"Root cause: {found.service} ({found.category}). Evidence: {found.cue[:160]}"
        if found
        else "No root cause found."
    )
    say(call, "DIAGNOSIS", body, [ids["fixer"], ids["commander"]], note)


def fixer(call: TeamCaller, observation: Mapping[str, Any], ids: Mapping[str, str]) -> None:
    """Apply the remedy the diagnosis calls for, verify it, and report back."""
    # Before the diagnosis arrives, learn the paged services (their releases, migrations,
    # replicas): the remedy starts from describe_service on the root.
    diagnosis = heard(
        call,
        "DIAGNOSIS",
        filler=looks([("describe_service", {"service": s}) for s in _paged(observation)]),
    )
    if not diagnosis:
        return
    d = Diagnosis(**diagnosis)
    ExpertPolicy().remediate(call, d)
    say(
        call,
        "FIXED",
        {
            "service": d.service,
            "category": d.category,
            "cue": d.cue[:CUE_CHARS],
            "location": d.location,
            "remediation": d.remediation,
        },
        [ids["commander"]],
        f"Applied {d.remediation} on {d.location}; verified.",
    )


ROLE_PLAYS = {"commander": commander, "investigator": investigator, "fixer": fixer}


def play_team(
    callers: Mapping[str, TeamCaller], observation: Mapping[str, Any], agent_ids: Mapping[str, str]
) -> None:
    """Play one episode with one caller per role, each role on its own thread.

    Args:
        callers: role -> the caller holding that role's seat.
        observation: the observation at the page.
        agent_ids: role -> that seat's agent id (the address for messages).
    """
    on_threads(ROLES, lambda role: ROLE_PLAYS[role](callers[role], observation, agent_ids))


__all__ = ["ROLES", "ROLE_PLAYS", "commander", "fixer", "investigator", "play_team"]
