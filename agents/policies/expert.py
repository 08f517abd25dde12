"""The scripted expert: a rule-following senior SRE that solves incidents from the evidence.

It knows no answers. It reads the dependency graph, the alerts and the terminal, follows the
failing services' logs toward the dependency they blame, decides the kind of failure from what the
logs say, then applies the remedy for that kind: revert the suspicious commit and prove it with
the matching test suite, roll back the bad release or migration, restart, or scale.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from metasre.agents.policies.base import ToolCaller, ToolReply
from metasre.agents.policies.evidence import (
    MIGRATION_ID,
    SUITE_FOR,
    TRACE_FILE,
    TRAFFIC_FACTOR,
    Finding,
    mentioned,
    parse_diff,
    read_finding,
)

_CODE_CATEGORIES = frozenset(SUITE_FOR)


@dataclass(slots=True)
class Diagnosis:
    """What the expert concluded before acting."""

    service: str
    category: str
    cue: str
    location: str = ""
    remediation: str = ""
    evidence: list[str] = field(default_factory=list)
    """Every warning and error line read from the root service, newest last."""


class ExpertPolicy:
    """Solves an incident by reading evidence; see the module docstring."""

    def __init__(self, max_services: int = 8) -> None:
        self.max_services = max_services
        self.diagnosis: Diagnosis | None = None

    def play(self, call: ToolCaller, observation: Mapping[str, Any]) -> None:
        """Investigate, fix, verify, report."""
        graph = _rows(call("check_dependencies", {}), "services")
        health = {r["service"]: r["health"] for r in graph}
        deps = {r["service"]: list(r["depends_on"]) for r in graph}
        alerts = _rows(call("get_alerts", {}), "alerts")
        terminal = [str(t) for t in observation.get("terminal", ())]
        diagnosis = self.diagnose(call, health, deps, alerts, terminal)
        if diagnosis is None:
            self.report(
                call,
                Diagnosis(
                    _loudest(alerts, health), "code_bug", "no evidence", "unknown", "code_fix"
                ),
            )
            return
        self.diagnosis = diagnosis
        self.remediate(call, diagnosis)
        self.report(call, diagnosis)

    # -- investigation ----------------------------------------------------------------------

    def diagnose(
        self,
        call: ToolCaller,
        health: Mapping[str, str],
        deps: Mapping[str, list[str]],
        alerts: Sequence[Mapping[str, Any]],
        terminal: Sequence[str],
    ) -> Diagnosis | None:
        """Follow the suspects' logs to the root cause; None if no evidence decides."""
        services = sorted(health)
        suspects: list[str] = []
        for line in terminal:  # the terminal names what on-call saw first
            suspects += [s for s in mentioned(line, services, "") if s not in suspects]
        for a in alerts:
            if a["service"] not in suspects:
                suspects.append(a["service"])
        suspects += [s for s in services if health[s] != "healthy" and s not in suspects]
        queue = self._deepest_first(suspects, deps)
        seen: list[str] = []
        findings: dict[str, Finding] = {}
        evidence: dict[str, list[str]] = {}
        while queue and len(seen) < self.max_services:
            service = queue.pop(0)
            if service in seen:
                continue
            seen.append(service)
            reply = call("read_logs", {"service": service, "level": "WARN", "lines": 80})
            lines = [str(r["text"]) for r in reply.data.get("lines", ())]
            lines += [t for t in terminal if mentioned(t, [service], "")]
            finding = read_finding(service, lines, services)
            findings[service] = finding
            evidence[service] = lines
            # Follow blame toward what this service calls: that is where faults start.
            downstream = [
                m for m in finding.mentions if m in deps.get(service, ()) and m not in seen
            ]
            if downstream:
                queue = downstream + queue
                continue
            if finding.category is not None:
                return Diagnosis(service, finding.category, finding.cue or "", evidence=lines)
        # Nobody blamed a dependency: take the deepest service with a category.
        for service in seen:
            f = findings[service]
            if f.category is not None:
                return Diagnosis(service, f.category, f.cue or "", evidence=evidence[service])
        return None

    @staticmethod
    def _deepest_first(suspects: Sequence[str], deps: Mapping[str, list[str]]) -> list[str]:
        """Suspects that depend on no other suspect come first (faults flow up the graph)."""

        def depth(s: str, trail: frozenset[str] = frozenset()) -> int:
            below = [d for d in deps.get(s, ()) if d in suspects and d not in trail]
            return 1 + max((depth(d, trail | {s}) for d in below), default=0)

        return sorted(suspects, key=lambda s: (depth(s), suspects.index(s)))

    # -- remediation ------------------------------------------------------------------------

    def remediate(self, call: ToolCaller, d: Diagnosis) -> None:
        """Apply the remedy for the diagnosed kind of failure; fills location and remediation."""
        info = call("describe_service", {"service": d.service}).data
        if d.category in _CODE_CATEGORIES:
            self._revert_suspicious_commit(call, d, info)
        elif d.category == "bad_deployment":
            d.location = f"deployment:{d.service}@{info.get('version')}"
            d.remediation = "rollback_deployment"
            call("rollback_deployment", {"service": d.service})
        elif d.category == "bad_migration":
            applied = [m["id"] for m in info.get("migrations", ()) if m.get("applied")]
            # Prefer an applied migration that the evidence names; the newest applied otherwise.
            named = [*MIGRATION_ID.findall(d.cue), *MIGRATION_ID.findall(" ".join(d.evidence))]
            target = next((m for m in named if m in applied), applied[-1] if applied else "")
            d.location = f"migration:{target}"
            d.remediation = "rollback_migration"
            call("rollback_migration", {"service": d.service, "migration": target})
        elif d.category == "crash_loop":
            d.location = f"service:{d.service}"
            d.remediation = "restart_service"
            call("restart_service", {"service": d.service})
        else:  # capacity
            replicas = int(info.get("replicas") or 1)
            factor = max([2.0, *(float(x) for x in TRAFFIC_FACTOR.findall(d.cue))])
            d.location = f"service:{d.service}"
            d.remediation = "scale_service"
            call(
                "scale_service",
                {"service": d.service, "replicas": min(64, math.ceil(replicas * factor) + 1)},
            )

    def _revert_suspicious_commit(
        self, call: ToolCaller, d: Diagnosis, info: Mapping[str, Any]
    ) -> None:
        d.remediation = "code_fix"
        code_dir = str(info.get("code_dir") or d.service)
        sha = None
        trace = TRACE_FILE.search(d.cue)
        if trace and trace.group("path").startswith(code_dir):
            blame = call(
                "git_blame",
                {
                    "path": trace.group("path"),
                    "start_line": int(trace.group("line")),
                    "end_line": int(trace.group("line")),
                },
            )
            if blame.ok and blame.data.get("lines"):
                sha = blame.data["lines"][0]["sha"]
        if sha is None:
            commits = _rows(call("git_log", {"path": code_dir, "limit": 5}), "commits")
            recent = [c for c in commits if float(c["minutes_ago"]) >= 0]
            sha = recent[0]["sha"] if recent else None
        if sha is None:
            return
        shown = call("git_show", {"commit": sha})
        hunks = [
            h
            for h in parse_diff(str(shown.data.get("diff", "")))
            if h.path.startswith(code_dir) and not h.path.startswith("tests/")
        ]
        if not hunks:
            return
        d.location = hunks[0].path
        # Bottom-up, so earlier hunks keep their line numbers.
        for h in sorted(hunks, key=lambda h: (h.path, h.new_start), reverse=True):
            if h.new:
                call(
                    "edit_lines",
                    {
                        "path": h.path,
                        "action": "replace",
                        "start_line": h.new_start,
                        "end_line": h.new_start + len(h.new) - 1,
                        "content": "\n".join(h.old),
                    },
                )
            else:
                call(
                    "edit_lines",
                    {
                        "path": h.path,
                        "action": "insert",
                        "start_line": h.new_start + 1,
                        "content": "\n".join(h.old),
                    },
                )
        call("run_tests", {"suite": SUITE_FOR[d.category]})

    # -- report -----------------------------------------------------------------------------

    @staticmethod
    def report(call: ToolCaller, d: Diagnosis) -> None:
        """File the incident report for diagnosis `d`."""
        summary = (
            f"{d.service} failed ({d.category.replace('_', ' ')}); evidence: "
            f"{d.cue.strip()[:300]}. Remediation: {d.remediation} on {d.location}."
        )
        call(
            "submit_report",
            {
                "root_cause_service": d.service,
                "root_cause_location": d.location or d.service,
                "category": d.category,
                "remediation": d.remediation or "code_fix",
                "summary": summary,
            },
        )


def _rows(reply: ToolReply, key: str) -> list[Mapping[str, Any]]:
    rows = reply.data.get(key, ()) if reply.ok else ()
    return [r for r in rows if isinstance(r, Mapping)]


def _loudest(alerts: Sequence[Mapping[str, Any]], health: Mapping[str, str]) -> str:
    if alerts:
        return str(alerts[0]["service"])
    return next((s for s, h in health.items() if h != "healthy"), next(iter(health), "unknown"))


__all__ = [
    "Diagnosis",
    "ExpertPolicy",
]
