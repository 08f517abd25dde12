"""The scripted team: a commander, an investigator and a fixer who cooperate through messages.

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

import json
import threading
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from metasre.agents.policies.base import ToolCaller
from metasre.agents.policies.expert import Diagnosis, ExpertPolicy

ROLES = ("commander", "investigator", "fixer")
WAIT_SECONDS = 60.0
"""How long a role waits for a teammate's message before giving up."""


Look = tuple[str, dict[str, Any]]


class TeamCaller(ToolCaller, Protocol):
    """A ToolCaller that can also wait for teammates' messages."""

    def wait_message(
        self,
        predicate: Callable[[Mapping[str, Any]], bool],
        timeout: float,
        filler: Callable[[], Look | None] | None = None,
    ) -> Mapping[str, Any] | None:
        """The first teammate message matching `predicate`, or None after `timeout` seconds.

        Turns the seat holds meanwhile (ROUND_ROBIN, SIMULTANEOUS) go to `filler`'s looks.
        """
        ...


def looks(items: list[Look]) -> Callable[[], Look | None]:
    """A filler that takes `items` in order, then nothing."""
    queue = list(items)
    return lambda: queue.pop(0) if queue else None


def _paged(observation: Mapping[str, Any]) -> list[str]:
    """The services the pager names, in the order it names them."""
    return list(dict.fromkeys(str(a["service"]) for a in observation.get("alerts", ())))


def _say(call: ToolCaller, kind: str, body: Mapping[str, Any], to: list[str], note: str) -> None:
    # A human-readable line for people watching, then the structured part for teammates.
    call("send_message", {"text": f"{note}\n{kind} {json.dumps(body, sort_keys=True)}", "to": to})


def _expect(
    call: TeamCaller, kind: str, filler: Callable[[], Look | None] | None = None
) -> dict[str, Any] | None:
    def matches(message: Mapping[str, Any]) -> bool:
        return any(
            line.startswith(f"{kind} ") for line in str(message.get("text", "")).splitlines()
        )

    message = call.wait_message(matches, WAIT_SECONDS, filler)
    if message is None:
        return None
    for line in str(message["text"]).splitlines():
        if line.startswith(f"{kind} "):
            body: dict[str, Any] = json.loads(line[len(kind) + 1 :])
            return body
    return None


def _latest(call: TeamCaller, kind: str) -> dict[str, Any] | None:
    """The body of the newest message of `kind` this seat received, without waiting."""
    found = call.wait_message(
        lambda m: any(line.startswith(f"{kind} ") for line in str(m.get("text", "")).splitlines()),
        0.0,
    )
    if found is None:
        return None
    for line in str(found["text"]).splitlines():
        if line.startswith(f"{kind} "):
            body: dict[str, Any] = json.loads(line[len(kind) + 1 :])
            return body
    return None


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

    # While the fixer works, watch the diagnosed service's errors (once a diagnosis is in).
    def watch() -> Look | None:
        found = _latest(call, "DIAGNOSIS")
        if not found or not found.get("service"):
            return None
        return ("query_metrics", {"service": found["service"], "metric": "error_rate"})

    fixed = _expect(call, "FIXED", watch)
    if fixed is None:
        return
    ExpertPolicy.report(call, Diagnosis(**fixed))


def investigator(call: TeamCaller, observation: Mapping[str, Any], ids: Mapping[str, str]) -> None:
    """Follow the evidence from the commander's triage to a diagnosis, and share it."""
    # Before the triage arrives, read the logs of the services the pager names: the first
    # places the diagnosis will look (the same calls, so it does not read them twice).
    triage = _expect(
        call,
        "TRIAGE",
        looks(
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
    # Before the diagnosis arrives, learn the paged services (their releases, migrations,
    # replicas): the remedy starts from describe_service on the root.
    diagnosis = _expect(
        call,
        "DIAGNOSIS",
        looks([("describe_service", {"service": s}) for s in _paged(observation)]),
    )
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


__all__ = [
    "ROLES",
    "ROLE_PLAYS",
    "WAIT_SECONDS",
    "Look",
    "TeamCaller",
    "commander",
    "fixer",
    "investigator",
    "looks",
    "play_team",
]
