"""The scripted team: a commander, an investigator and a fixer who cooperate through messages.

The commander triages (alerts, dependency graph) and tells the investigator where to look; the
investigator follows the logs to the root cause and sends its diagnosis to the fixer and the
commander; the fixer applies the remedy for that kind of failure, proves it, and says so; the
commander then files the report. Each role holds its own seat and runs on its own thread, so
under FREE_FOR_ALL their calls interleave as they would for three people.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from metasre.agents.policies.base import ToolCaller
from metasre.agents.policies.expert import Diagnosis, ExpertPolicy

ROLES = ("commander", "investigator", "fixer")
WAIT_SECONDS = 60.0
"""How long a role waits for a teammate's message before giving up."""


class TeamCaller(ToolCaller, Protocol):
    """A ToolCaller that can also wait for teammates' messages."""

    def wait_message(
        self, predicate: Callable[[Mapping[str, Any]], bool], timeout: float
    ) -> Mapping[str, Any] | None:
        """The first teammate message matching `predicate`, or None after `timeout` seconds."""
        ...


def _say(call: ToolCaller, kind: str, body: Mapping[str, Any], to: list[str], note: str) -> None:
    # A human-readable line for people watching, then the structured part for teammates.
    call("send_message", {"text": f"{note}\n{kind} {json.dumps(body, sort_keys=True)}", "to": to})


def _expect(call: TeamCaller, kind: str) -> dict[str, Any] | None:
    def matches(message: Mapping[str, Any]) -> bool:
        return any(
            line.startswith(f"{kind} ") for line in str(message.get("text", "")).splitlines()
        )

    message = call.wait_message(matches, WAIT_SECONDS)
    if message is None:
        return None
    for line in str(message["text"]).splitlines():
        if line.startswith(f"{kind} "):
            body: dict[str, Any] = json.loads(line[len(kind) + 1 :])
            return body
    return None


def commander(call: TeamCaller, observation: Mapping[str, Any], ids: Mapping[str, str]) -> None:
    """Triage, hand the investigation over, wait for the fix, file the report."""
    graph = [r for r in call("check_dependencies", {}).data.get("services", ())]
    alerts = [a for a in call("get_alerts", {}).data.get("alerts", ())]
    _say(
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
    fixed = _expect(call, "FIXED")
    if fixed is None:
        return
    ExpertPolicy.report(call, Diagnosis(**fixed))


def investigator(call: TeamCaller, observation: Mapping[str, Any], ids: Mapping[str, str]) -> None:
    """Follow the evidence from the commander's triage to a diagnosis, and share it."""
    triage = _expect(call, "TRIAGE")
    if triage is None:
        return
    health = {r["service"]: r["health"] for r in triage["graph"]}
    deps = {r["service"]: list(r["depends_on"]) for r in triage["graph"]}
    found = ExpertPolicy().diagnose(call, health, deps, triage["alerts"], triage["terminal"])
    body = (
        {
            "service": found.service,
            "category": found.category,
            "cue": found.cue,
            "evidence": found.evidence[-20:],
        }
        if found
        else {}
    )
    note = (
        f"Root cause: {found.service} ({found.category}). Evidence: {found.cue[:160]}"
        if found
        else "No root cause found."
    )
    _say(call, "DIAGNOSIS", body, [ids["fixer"], ids["commander"]], note)


def fixer(call: TeamCaller, observation: Mapping[str, Any], ids: Mapping[str, str]) -> None:
    """Apply the remedy the diagnosis calls for, verify it, and report back."""
    diagnosis = _expect(call, "DIAGNOSIS")
    if not diagnosis:
        return
    d = Diagnosis(**diagnosis)
    ExpertPolicy().remediate(call, d)
    _say(
        call,
        "FIXED",
        {
            "service": d.service,
            "category": d.category,
            "cue": d.cue,
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
    errors: list[BaseException] = []

    def run(role: str) -> None:
        try:
            ROLE_PLAYS[role](callers[role], observation, agent_ids)
        except BaseException as exc:  # surfaced to the caller below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(role,), name=f"team-{role}") for role in ROLES]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
