"""The scripted expert: a rule-following senior SRE that solves incidents from the evidence.

It knows no answers. It reads the dependency graph, the alerts and the terminal, follows the
failing services' logs toward the dependency they blame, decides the kind of failure from what the
logs say, then applies the remedy for that kind: revert the suspicious commit and prove it with
the matching test suite, roll back the bad release or migration, restart, or scale; or, for a
runtime setting, read `get_config` and put back what the evidence names (a config key, a flag,
a certificate, a clock, a disk, a queue's head message, a cache).

An incident can have more than one fault. After each remedy the expert looks again (alerts and
health): a service still failing that no diagnosis so far explains (neither a root nor, through
the dependency graph or its own log, downstream of one) is a further fault, diagnosed among the
unexplained services alone and remedied in turn, up to `max_faults`. The report names the
primary fault: the one that explains the page's first alert (most severe, then oldest).

It plays whatever view its seat has: a call the view refuses (a failed reply, or a ClientError
raised by the caller) is skipped, and the expert goes on with what it can see.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ClientError, ConnectionLostError, EpisodeOverError
from .base import ToolCaller, ToolReply
from .evidence import (
    BUMP_COMMIT,
    FLAG_NAME,
    MIGRATION_ID,
    RETRY_KEY,
    SUITE_FOR,
    TRACE_FILE,
    TRAFFIC_FACTOR,
    Finding,
    mentioned,
    parse_diff,
    read_finding,
)

_CODE_CATEGORIES = frozenset(SUITE_FOR)
_MIGRATION_CATEGORIES = frozenset({"bad_migration", "slow_query"})
RECENT_COMMIT_MINUTES = 3 * 24 * 60.0
"""How far back the expert looks for the commit that broke a service (without a stack trace)."""
IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]{3,}")
"""A name in code or a log line, as the expert matches a commit's changes to the evidence."""


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

    def __init__(self, max_services: int = 8, max_faults: int = 3) -> None:
        self.max_services = max_services
        self.max_faults = max_faults
        """How many faults one episode is diagnosed and remedied for, at most."""
        self.diagnosis: Diagnosis | None = None
        """The primary fault's diagnosis: the one the report names."""
        self.diagnoses: list[Diagnosis] = []
        """Every fault diagnosed and remedied, in the order they were."""
        self._services: list[str] = []
        self._configs: dict[str, Mapping[str, Any]] = {}
        self._findings: dict[str, Finding] = {}
        """What each service's log said, once read (a further fault is looked for without
        reading them again)."""
        self._evidence: dict[str, list[str]] = {}
        self._accounted: list[set[str]] = []
        """Per diagnosis, the services it explains (`_explained_by`)."""

    def play(self, call: ToolCaller, observation: Mapping[str, Any]) -> None:
        """Investigate, fix, verify; look again for what is still failing; report."""
        call = tolerant(call)
        health, deps = self._graph(call, observation)
        alerts = _rows(call("get_alerts", {}), "alerts")
        page = list(alerts)
        terminal = [str(t) for t in observation.get("terminal", ())]
        explained: set[str] = set()
        while len(self.diagnoses) < self.max_faults:
            found = self.diagnose(call, health, deps, alerts, terminal, skip=explained)
            if found is None:
                break
            root = found.service
            self.remediate(call, found)
            self.diagnoses.append(found)
            failing = {str(a["service"]) for a in alerts}
            failing |= {s for s, h in health.items() if h != "healthy"}
            self._accounted.append(self._explained_by(found, root, deps, failing))
            explained |= self._accounted[-1]
            if len(self.diagnoses) == self.max_faults:
                break
            # Look again: whatever still fails and no diagnosis explains is another fault.
            health, deps = self._graph(call, observation)
            alerts = _rows(call("get_alerts", {}), "alerts")
            still = [str(a["service"]) for a in alerts]
            still += [s for s, h in health.items() if h != "healthy"]
            if all(s in explained for s in still):
                break
            terminal = []  # the page's terminal told its story already
        if not self.diagnoses:
            self.report(
                call,
                Diagnosis(
                    _loudest(alerts, health), "code_bug", "no evidence", "unknown", "code_fix"
                ),
            )
            return
        self.diagnosis = self._primary(page)
        self.report(call, self.diagnosis, [d for d in self.diagnoses if d is not self.diagnosis])

    def _graph(
        self, call: ToolCaller, observation: Mapping[str, Any]
    ) -> tuple[dict[str, str], dict[str, list[str]]]:
        """Health and dependencies per service, from check_dependencies (else the dashboard)."""
        graph = _rows(call("check_dependencies", {}), "services")
        if not graph:  # refused: the dashboard shows the same rows the view allows
            graph = [
                {"service": r["name"], "health": r["health"], "depends_on": r["depends_on"]}
                for r in _mappings(observation.get("services", ()))
            ]
        health = {str(r["service"]): str(r["health"]) for r in graph}
        deps = {str(r["service"]): [str(d) for d in r["depends_on"]] for r in graph}
        return health, deps

    def _explained_by(
        self, d: Diagnosis, root: str, deps: Mapping[str, list[str]], failing: Collection[str]
    ) -> set[str]:
        """The services a diagnosed fault accounts for.

        Its root (as diagnosed, and where the remedy found it), the failing services that
        depend on it through failing services (a failure spreads up through callers that
        fail; a healthy one in between stops it), and whatever blamed it in its log.
        """
        roots = {root, d.service}
        out = set(roots)
        grew = True
        while grew:
            callers = {
                s for s, below in deps.items() if s not in out and s in failing and out & set(below)
            }
            grew = bool(callers)
            out |= callers
        out |= {s for s, f in self._findings.items() if roots & set(f.mentions)}
        return out

    def _primary(self, page: Sequence[Mapping[str, Any]]) -> Diagnosis:
        """The diagnosis that explains the page's first alert; else the first diagnosis.

        get_alerts lists the most severe first, then the oldest.
        """
        for alert in page:
            for d, accounted in zip(self.diagnoses, self._accounted, strict=True):
                if str(alert["service"]) in accounted:
                    return d
        return self.diagnoses[0]

    # -- investigation ----------------------------------------------------------------------

    def diagnose(
        self,
        call: ToolCaller,
        health: Mapping[str, str],
        deps: Mapping[str, list[str]],
        alerts: Sequence[Mapping[str, Any]],
        terminal: Sequence[str],
        skip: Collection[str] = (),
    ) -> Diagnosis | None:
        """Follow the suspects' logs to the root cause; None if no evidence decides.

        `skip`: services already accounted for (by an earlier diagnosis): neither suspected
        nor followed.
        """
        call = tolerant(call)
        services = sorted(health)
        self._services = services
        suspects: list[str] = []
        for line in terminal:  # the terminal names what on-call saw first
            suspects += [s for s in mentioned(line, services, "") if s not in suspects]
        for a in alerts:
            if a["service"] not in suspects:
                suspects.append(a["service"])
        suspects += [s for s in services if health[s] != "healthy" and s not in suspects]
        suspects = [s for s in suspects if s not in skip]
        if not suspects and not skip:
            return self._sole_finding(call, services, terminal)
        queue = self._deepest_first(suspects, deps)
        seen: list[str] = list(skip)
        findings: dict[str, Finding] = {}
        evidence: dict[str, list[str]] = {}
        while queue and len(seen) - len(skip) < self.max_services:
            service = queue.pop(0)
            if service in seen:
                continue
            seen.append(service)
            finding, lines = self._read(call, service, services, terminal)
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
        for service in seen[len(skip) :]:
            f = findings[service]
            if f.category is not None:
                return Diagnosis(service, f.category, f.cue or "", evidence=evidence[service])
        return None

    def _read(
        self, call: ToolCaller, service: str, services: Sequence[str], terminal: Sequence[str]
    ) -> tuple[Finding, list[str]]:
        """What a service's warning lines (and the terminal's about it) show, and the lines.

        Read once per episode: looking again for an earlier fault costs no second call.
        """
        if service in self._findings:
            return self._findings[service], self._evidence[service]
        reply = call("read_logs", {"service": service, "level": "WARN", "lines": 80})
        lines = [str(r["text"]) for r in _mappings(reply.data.get("lines", ()))]
        lines += [t for t in terminal if mentioned(t, [service], "")]
        finding = read_finding(service, lines, services)
        if reply.ok:
            self._findings[service], self._evidence[service] = finding, lines
        return finding, lines

    def _sole_finding(
        self, call: ToolCaller, services: Sequence[str], terminal: Sequence[str]
    ) -> Diagnosis | None:
        """The one service whose log shows a fault, when nothing pages and nothing looks sick.

        Wrong data or a leak: read every service's log, as an on-call with only a customer's
        word would. A finding that blames another service with a finding of its own is that
        one's symptom. Several look-alike findings left with nothing to tell them apart are a
        guess, not a diagnosis: a seat that sees only part of the platform must not bet on one.
        """
        found: list[tuple[Diagnosis, Finding]] = []
        for service in services:
            finding, lines = self._read(call, service, services, terminal)
            if finding.category is not None:
                found.append(
                    (
                        Diagnosis(service, finding.category, finding.cue or "", evidence=lines),
                        finding,
                    )
                )
        # A finding that blames another service with a finding of its own is that one's symptom.
        named = {d.service for d, _ in found}
        roots = [d for d, f in found if not named & (set(f.mentions) - {d.service})]
        return roots[0] if len(roots) == 1 else None

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
        call = tolerant(call)
        knob = getattr(self, f"_fix_{d.category}", None)
        if knob is not None:
            knob(call, d)
            return
        info = call("describe_service", {"service": d.service}).data
        if d.category in _CODE_CATEGORIES:
            self._revert_suspicious_commit(call, d, info)
        elif d.category == "bad_deployment":
            d.location = f"deployment:{d.service}@{info.get('version')}"
            d.remediation = "rollback_deployment"
            call("rollback_deployment", {"service": d.service})
        elif d.category in _MIGRATION_CATEGORIES:
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
            self._scale(call, d, int(info.get("replicas") or 1))

    def _scale(self, call: ToolCaller, d: Diagnosis, replicas: int) -> None:
        factor = max([2.0, *(float(x) for x in TRAFFIC_FACTOR.findall(d.cue))])
        d.location = f"service:{d.service}"
        d.remediation = "scale_service"
        call(
            "scale_service",
            {"service": d.service, "replicas": min(64, math.ceil(replicas * factor) + 1)},
        )

    # -- runtime settings: read get_config, put back what the evidence names ------------------

    def _config(self, call: ToolCaller, service: str) -> Mapping[str, Any]:
        """get_config of `service`, read once per episode."""
        if service not in self._configs:
            reply = call("get_config", {"service": service})
            self._configs[service] = reply.data if reply.ok else {}
        return self._configs[service]

    def _candidates(self, call: ToolCaller, d: Diagnosis) -> list[str]:
        """The diagnosed service, then the services its evidence names, in order of mention."""
        if not self._services:  # a teammate diagnosed it: learn the platform's services
            graph = _rows(call("check_dependencies", {}), "services")
            self._services = sorted(str(r["service"]) for r in graph)
        named: list[str] = []
        for line in d.evidence:
            named += [s for s in mentioned(line, self._services, d.service) if s not in named]
        return [d.service, *named]

    def _fix_bad_config(self, call: ToolCaller, d: Diagnosis) -> None:
        """Put back the config push the logs name (by its key), else the newest one."""
        self._revert_push(call, d, lambda key: True)

    def _fix_retry_storm(self, call: ToolCaller, d: Diagnosis) -> None:
        """Put back the retry setting of the service that retries (the one with a retry push).

        The storm's target is the diagnosed service: the push to undo is a caller's retries
        *to it* ("<target>.retries"); a retry push elsewhere, even on the target itself (its own
        retries to its callees), is not the storm's. Any retry push only if none aims at it.
        """
        target = f"{d.service}."
        aimed = self._revert_push(
            call, d, lambda key: key.startswith(target) and RETRY_KEY.search(key) is not None
        )
        if not aimed:
            self._revert_push(call, d, lambda key: RETRY_KEY.search(key) is not None)

    def _revert_push(self, call: ToolCaller, d: Diagnosis, wanted: Any) -> bool:
        """Undo the wanted push on the first candidate service that has one; False if none."""
        text = " ".join([d.cue, *d.evidence])
        for service in self._candidates(call, d):
            pushes = [
                p
                for p in self._config(call, service).get("pushes", ())
                if not p.get("rollback") and wanted(str(p["key"]))
            ]
            if not pushes:
                continue
            # Newest first: the newest push of a key the evidence names, else the newest.
            push = next((p for p in pushes if str(p["key"]) in text), pushes[0])
            d.service, d.location, d.remediation = (
                service,
                f"config:{push['key']}",
                "rollback_config",
            )
            newest = self._config(call, service)["pushes"][0]
            if newest is push:
                call("rollback_config", {"service": service})
            else:
                call("set_config", {"service": service, "key": push["key"], "value": push["old"]})
            return True
        return False

    def _fix_feature_flag(self, call: ToolCaller, d: Diagnosis) -> None:
        """Turn off the flag the logs name (else the diagnosed service's newest-changed one)."""
        text = " ".join([d.cue, *d.evidence])
        named = FLAG_NAME.findall(text)
        owned = sorted(
            self._config(call, d.service).get("flags", ()),
            key=lambda f: -float(f["changed_minute"]),
        )
        flag = next((str(f["name"]) for f in owned if str(f["name"]) in text), None)
        flag = flag or (named[0] if named else (str(owned[0]["name"]) if owned else None))
        d.remediation = "set_feature_flag"
        if flag is None:
            d.location = f"service:{d.service}"
            return
        reply = call("set_feature_flag", {"flag": flag, "rollout_percent": 0})
        if reply.ok:
            d.service = str(reply.data.get("service", d.service))
        d.location = f"flag:{flag}"

    def _fix_expired_certificate(self, call: ToolCaller, d: Diagnosis) -> None:
        """Renew the expired certificate the logs name, on whichever service holds it."""
        text = " ".join([d.cue, *d.evidence])
        found: list[tuple[int, str, str]] = []
        for rank, service in enumerate(self._candidates(call, d)):
            for cert in self._config(call, service).get("certificates", ()):
                if not cert.get("expired"):
                    continue
                named = str(cert["name"]) in text or any(h in text for h in cert["hostnames"])
                found.append((0 if named else 1, service, str(cert["name"])))
            if found and rank == 0:
                break  # the diagnosed service's own expired certificate comes first
        d.remediation = "renew_certificate"
        if not found:
            d.location = f"service:{d.service}"
            return
        _, d.service, name = min(found, key=lambda f: f[0])
        d.location = f"certificate:{name}"
        call("renew_certificate", {"service": d.service, "certificate": name})

    def _fix_clock_skew(self, call: ToolCaller, d: Diagnosis) -> None:
        """Sync the clock of the service (of those the evidence names) that is furthest off."""
        offsets = {
            s: abs(float(self._config(call, s).get("clock_offset_seconds", 0.0)))
            for s in self._candidates(call, d)
        }
        skewed = max(offsets, key=lambda s: offsets[s])
        d.service = skewed if offsets[skewed] > 0 else d.service
        d.location, d.remediation = f"service:{d.service}", "sync_clock"
        call("sync_clock", {"service": d.service})

    def _fix_disk_full(self, call: ToolCaller, d: Diagnosis) -> None:
        """Put the log level back to what it was before DEBUG, then free the disk."""
        config = self._config(call, d.service)
        debug = next(
            (
                p
                for p in config.get("pushes", ())
                if p["key"] == "log_level" and str(p["new"]).upper() == "DEBUG"
            ),
            None,
        )
        d.remediation = "clean_disk"
        d.location = f"service:{d.service}"
        if debug is not None and str(config["config"].get("log_level", "")).upper() == "DEBUG":
            d.location = "config:log_level"
            call("set_config", {"service": d.service, "key": "log_level", "value": debug["old"]})
        call("clean_disk", {"service": d.service})

    def _fix_consumer_lag(self, call: ToolCaller, d: Diagnosis) -> None:
        """Dead-letter a poison head message the logs name; without one, add consumers."""
        text = " ".join([d.cue, *d.evidence])
        queues = list(self._config(call, d.service).get("queues", ()))
        poison = "poison" in text.lower()
        named = [q for q in queues if q.get("head_message_id") and q["head_message_id"] in text]
        head = named or ([q for q in queues if str(q["name"]) in text] if poison else [])
        if head:
            queue = str(head[0]["name"])
            d.location, d.remediation = f"queue:{queue}", "skip_message"
            call("skip_message", {"queue": queue})
            return
        info = call("describe_service", {"service": d.service}).data
        self._scale(call, d, int(info.get("replicas") or 1))

    def _fix_cache_stampede(self, call: ToolCaller, d: Diagnosis) -> None:
        d.location, d.remediation = f"service:{d.service}", "warm_cache"
        call("warm_cache", {"service": d.service})

    def _revert_suspicious_commit(
        self, call: ToolCaller, d: Diagnosis, info: Mapping[str, Any]
    ) -> None:
        d.remediation = "code_fix"
        code_dir = str(info.get("code_dir") or d.service)
        sha = None
        trace = TRACE_FILE.search(d.cue) if d.category != "dependency_bump" else None
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
            commits = _rows(call("git_log", {"path": code_dir, "limit": 10}), "commits")
            recent = [c for c in commits if float(c["minutes_ago"]) >= 0]
            if d.category == "dependency_bump":
                # The stack trace points at the caller; the change is the version bump.
                bumps = [c for c in recent if BUMP_COMMIT.search(_commit_text(c))]
                recent = bumps or recent
            # This release's commits (days, not the weeks-old groundwork), newest first.
            fresh = [c for c in recent if float(c["minutes_ago"]) <= RECENT_COMMIT_MINUTES]
            sha = self._likeliest_commit(call, d, (fresh or recent)[:8]) if recent else None
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
        if d.category == "code_bug" and BUMP_COMMIT.search(str(shown.data.get("message", ""))):
            # The trace read as a plain bug; the change that made it is a version bump.
            d.category = "dependency_bump"
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

    @staticmethod
    def _likeliest_commit(
        call: ToolCaller, d: Diagnosis, commits: Sequence[Mapping[str, Any]]
    ) -> str:
        """The recent commit whose changed lines share most names with the evidence.

        Other teams land work around a bad commit, so the newest is not the culprit by rule:
        read each and weigh what it changed against what the logs say (the newest wins ties).
        """
        said = set(IDENTIFIER.findall(" ".join([d.cue, *d.evidence]).lower()))
        # The files the stack traces pass through (as deployed: "/app/<tree path>").
        # Deeper frames later: a traceback lists the caller first and the frame that raised
        # last, so a file's last place in the evidence ranks it.
        traced = {
            m.group("path").lstrip("/"): i
            for i, m in enumerate(TRACE_FILE.finditer(" ".join(d.evidence)), start=1)
        }
        # A commit's message says what it meant to change, in the words logs use ("millisecond
        # senders" beside "send milliseconds"): compared by their stems, as a reader would.
        said_stems = _stems(" ".join([d.cue, *d.evidence]))
        best, best_score = str(commits[0]["sha"]), (-1, -1, -1)
        for commit in commits:
            shown = call("git_show", {"commit": commit["sha"]})
            changed = {
                w
                for h in parse_diff(str(shown.data.get("diff", "")))
                if not h.path.startswith("tests/")
                for line in set(h.old) ^ set(h.new)
                if not line.lstrip().startswith("#")
                for w in IDENTIFIER.findall(line.lower())
            }
            subject = str(commit.get("message", commit.get("subject", "")))
            meant = _stems(subject)
            touched = [
                h.path for h in parse_diff(str(shown.data.get("diff", ""))) if h.path != "/dev/null"
            ]
            in_trace = max(
                (
                    depth
                    for t, depth in traced.items()
                    for p in touched
                    if t == p or t.endswith("/" + p)
                ),
                default=0,
            )
            # What it changed decides, then how deep a file it touched the traces pass through
            # (a rates table changed under the function that fails, not the caller beside it
            # another team appended to); what it meant to change breaks the ties.
            score = (len(changed & said), in_trace, len(meant & said_stems))
            if score > best_score:
                best, best_score = str(commit["sha"]), score
        return best

    # -- report -----------------------------------------------------------------------------

    @staticmethod
    def report(call: ToolCaller, d: Diagnosis, further: Sequence[Diagnosis] = ()) -> None:
        """File the incident report for diagnosis `d`, naming the `further` faults remedied."""
        summary = (
            f"{d.service} failed ({d.category.replace('_', ' ')}); evidence: "
            f"{d.cue.strip()[:300]}. Remediation: {d.remediation} on {d.location}."
        )
        for f in further:
            summary += (
                f" Also failing at the same time: {f.service} ({f.category.replace('_', ' ')});"
                f" remedied with {f.remediation or 'nothing'} on {f.location or f.service}."
            )
        tolerant(call)(
            "submit_report",
            {
                "root_cause_service": d.service,
                "root_cause_location": d.location or d.service,
                "category": d.category,
                "remediation": d.remediation or "code_fix",
                "summary": summary,
            },
        )


def _commit_text(commit: Mapping[str, Any]) -> str:
    """A git_log row's message and files, as one text to search."""
    files = commit.get("files", ())
    return " ".join([str(commit.get("message", "")), *(str(f) for f in files)])


def tolerant(call: ToolCaller) -> ToolCaller:
    """`call`, with the refusals it raises turned into failed replies.

    A view's refusal or an argument's: a seat plays on with what its view shows. A lost
    connection still raises (its caller resumes the seat).
    """
    if isinstance(call, _Tolerant):
        return call
    return _Tolerant(call)


class _Tolerant:
    __slots__ = ("_call",)

    def __init__(self, call: ToolCaller) -> None:
        self._call = call

    def __call__(self, tool: str, args: Mapping[str, Any]) -> ToolReply:
        try:
            return self._call(tool, args)
        except EpisodeOverError as exc:
            return ToolReply(False, str(exc), {}, True, exc.reason or exc.code)
        except ConnectionLostError:
            raise  # the caller's to resume; nothing was refused
        except ClientError as exc:
            return ToolReply(False, str(exc), {}, False, exc.reason or exc.code)


def _mappings(rows: Any) -> list[Mapping[str, Any]]:
    if isinstance(rows, str | bytes | Mapping) or not isinstance(rows, Iterable):
        return []
    return [r for r in rows if isinstance(r, Mapping)]


def _rows(reply: ToolReply, key: str) -> list[Mapping[str, Any]]:
    return _mappings(reply.data.get(key, ())) if reply.ok else []


_STOP = frozenset({"the", "and", "for", "with", "from", "that", "this", "into", "not", "are"})


def _stems(text: str) -> set[str]:
    """Words of `text` cut to six letters, split at underscores (`time_unit` says "unit")."""
    words = re.findall(r"[a-z][a-z0-9]{2,}", text.lower().replace("_", " "))
    return {w[:6] for w in words if w not in _STOP}


def _loudest(alerts: Sequence[Mapping[str, Any]], health: Mapping[str, str]) -> str:
    if alerts:
        return str(alerts[0]["service"])
    return next((s for s, h in health.items() if h != "healthy"), next(iter(health), "unknown"))


__all__ = [
    "Diagnosis",
    "ExpertPolicy",
    "tolerant",
]
