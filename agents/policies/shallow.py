"""Shallow policies: act on the opening and fixed first glances, never investigate.

`metasre validate` plays them to prove that a family must be investigated. A shallow policy
reads the page, the alerts and the dashboard, takes the same first glances whatever they show
(the platform's recent changes and the recent commits), then only operates and reports. Two
kinds, both written as an attacker who has read the family's generator would write them:

- **scripts**: fixed rules, one per (remedy the family uses, way of picking the target): the
  loudest row, the alerted service, the deepest unhealthy dependency, the newest or oldest
  change of the remedy's kind, ...;
- **a learner**: every operation the family allows on every service or recent change is a
  candidate, described only by what shows before investigating (its tool, the rank of its
  service by each signal, the alerts naming it, the age and kind of its change, the page's
  words); a logistic model fitted to the reference's operations and reports on training seeds
  picks and reports candidates on seeds of the test split, whose structures it never saw.

Each plays through a ToolCaller, as an agent would, and is graded by the family's grader.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .base import ToolCaller
from .evidence import parse_diff

__all__ = ["ShallowLearner", "example", "glance", "scripts"]

GLANCES: tuple[tuple[str, dict[str, Any]], ...] = (("get_events", {}), ("git_log", {}))
"""The first glances every shallow policy takes, whatever the opening shows."""

SERVICE_TOOLS = (
    "restart_service",
    "scale_service",
    "rollback_deployment",
    "rollback_config",
    "clean_disk",
    "sync_clock",
    "warm_cache",
    "renew_certificate",
)
"""Operations a shallow policy can aim at any service of the dashboard."""

CODE_TOOLS = ("edit_lines",)
"""Tools that change the code: a reference that calls one fixes the code."""

_EVENT_TOOL = {
    "migration": "rollback_migration",
    "flag": "set_feature_flag",
    "config": "set_config",
}
_MIGRATION = re.compile(r"applied migration (\S+) on")
_FLAG = re.compile(r"feature flag (\S+) rollout")
_CONFIG = re.compile(r"set config (\S+) on \S+: (.+?) -> ")
_WORD = re.compile(r"[a-z][a-z_]{2,}")
_MINUTES = re.compile(r"(\d+)\s*min")
_SEVERITY = {"P1": 1.0, "P2": 0.66, "P3": 0.33}


@dataclass(frozen=True, slots=True)
class Opening:
    """What a shallow policy knows: the opening observation and its fixed glances."""

    observation: Mapping[str, Any]
    events: tuple[Mapping[str, Any], ...]
    commits: tuple[Mapping[str, Any], ...]

    @property
    def rows(self) -> list[Mapping[str, Any]]:
        """The dashboard's service rows."""
        return list(self.observation.get("services", ()))

    @property
    def onset(self) -> float | None:
        """How many minutes ago the page says the symptom started, if it says."""
        found = _MINUTES.search(str(self.observation.get("description", "")))
        return float(found.group(1)) if found else None

    def words(self) -> set[str]:
        """The words of the page, the alerts' summaries and the terminal, service names apart."""
        names = {str(r["name"]).lower() for r in self.rows}
        text = " ".join(
            [
                str(self.observation.get("title", "")),
                str(self.observation.get("description", "")),
                *(str(a.get("summary", "")) for a in self.observation.get("alerts", ())),
                *(str(t) for t in self.observation.get("terminal", ())),
            ]
        ).lower()
        for name in names:
            text = text.replace(name, " ")
        return set(_WORD.findall(text)) | self._frame_words()

    def _frame_words(self) -> set[str]:
        """The opening's numbers as words.

        How long ago the page says it started and the alerts have fired (5-minute buckets),
        the SLA, the step budget, how many services: a cause with its own onset, SLA or
        topology size would be named by them.
        """
        obs = self.observation
        words = {
            f"sla_{int(float(obs.get('sla_minutes_left', 0)))}",
            f"budget_{int(obs.get('step_budget', 0))}",
            f"services_{len(self.rows)}",
        }
        page = str(obs.get("description"))
        words |= {f"page_min_{int(m) // 5}" for m in _MINUTES.findall(page)}
        for alert in obs.get("alerts", ()):
            words.add(f"alert_min_{int(alert.get('firing_minutes', 0)) // 5}")
        return words


def glance(caller: ToolCaller, observation: Mapping[str, Any]) -> Opening:
    """Take the fixed first glances."""
    events = caller(*GLANCES[0]).data.get("events", []) if GLANCES else []
    commits = caller(*GLANCES[1]).data.get("commits", [])
    return Opening(observation, tuple(events), tuple(commits))


@dataclass(frozen=True, slots=True)
class Candidate:
    """One operation a shallow policy may take, with what it knows of it."""

    tool: str
    service: str
    args: Mapping[str, Any]
    location: str
    """Where the report would say the cause lives, if this is the fix."""
    event: int | None = None
    """Index of the change (in Opening.events) it undoes, if any."""
    features: Mapping[str, float] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str, str]:
        """What it does, for matching against a reference step."""
        target = str(
            self.args.get("migration")
            or self.args.get("flag")
            or self.args.get("key")
            or self.args.get("commit")
            or ""
        )
        return (self.tool, self.service, target)


def _depths(rows: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Hops from the edge (services nothing on the dashboard calls) to each service."""
    names = {str(r["name"]) for r in rows}
    called = {d for r in rows for d in r.get("depends_on", ()) if d in names}
    deps = {str(r["name"]): [d for d in r.get("depends_on", ()) if d in names] for r in rows}
    depth = {n: 0 for n in names - called}
    frontier = list(depth)
    while frontier:
        nxt = []
        for n in frontier:
            for d in deps[n]:
                if d not in depth:
                    depth[d] = depth[n] + 1
                    nxt.append(d)
        frontier = nxt
    return {n: depth.get(n, 0) for n in names}


def _ranks(rows: Sequence[Mapping[str, Any]], signal: str) -> dict[str, float]:
    """1 for the row highest on `signal`, 1/2 for the next, ..."""
    ordered = sorted(rows, key=lambda r: (-float(r.get(signal) or 0.0), str(r["name"])))
    return {str(r["name"]): 1.0 / (i + 1) for i, r in enumerate(ordered)}


def candidates(opening: Opening) -> list[Candidate]:
    """Every operation a shallow policy could take here, each with its features."""
    rows = opening.rows
    if not rows:
        return []
    depth = _depths(rows)
    ranks = {s: _ranks(rows, s) for s in ("error_rate", "p99_ms", "cpu", "memory", "queue_depth")}
    alerts = list(opening.observation.get("alerts", ()))
    alert_sev: dict[str, float] = defaultdict(float)
    first_alert: dict[str, float] = {}
    for i, a in enumerate(alerts):
        svc = str(a.get("service", ""))
        alert_sev[svc] = max(alert_sev[svc], _SEVERITY.get(str(a.get("severity")), 0.2))
        first_alert.setdefault(svc, 1.0 / (i + 1))
    n_events = len(opening.events)
    changed: dict[str, list[int]] = defaultdict(list)
    for i, e in enumerate(opening.events):
        changed[str(e.get("service", ""))].append(i)
    words = opening.words()
    maxdepth = max(depth.values()) or 1
    onset = opening.onset
    gaps = [_gap(onset, -float(e.get("minute", 0.0))) for e in opening.events]
    nearest = min(gaps, default=None)
    at_onset = {
        str(e.get("service", "")) for e, g in zip(opening.events, gaps, strict=True) if g <= 0.5
    }

    def base(row: Mapping[str, Any]) -> dict[str, float]:
        name = str(row["name"])
        mine = changed.get(name, [])
        f = {f"rank_{s}": ranks[s][name] for s in ranks} | {
            "unhealthy": float(row.get("health") != "healthy"),
            "down": float(row.get("health") == "down"),
            "error_rate": float(row.get("error_rate") or 0.0),
            "edge": float(depth[name] == 0),
            "depth": depth[name] / maxdepth,
            "leaf": float(not row.get("depends_on")),
            "alerted": alert_sev.get(name, 0.0),
            "first_alert": first_alert.get(name, 0.0),
            "recent_deploy": float(bool(row.get("recent_deploy"))),
            "changed": float(bool(mine)),
            "newest_change": 1.0 / (n_events - max(mine)) if mine else 0.0,
            "changed_at_onset": float(name in at_onset),
        }
        return f

    found: list[Candidate] = []
    by_name = {str(r["name"]): r for r in rows}
    for row in rows:
        name = str(row["name"])
        feats = base(row)
        for tool in SERVICE_TOOLS:
            args: dict[str, Any] = {"service": name}
            location = f"service:{name}"
            if tool == "scale_service":
                replicas = int(row.get("replicas") or 1)
                args["replicas"] = max(2 * replicas, replicas + 2)
            elif tool == "rollback_deployment":
                location = f"deployment:{name}@{row.get('version', '')}"
            elif tool == "renew_certificate":
                args["certificate"] = ""  # named at play time, from the service's settings
                location = "certificate:"
            found.append(Candidate(tool, name, args, location, None, _crossed(tool, feats, words)))
    kinds: dict[str, list[int]] = defaultdict(list)
    for i, e in enumerate(opening.events):
        kinds[str(e.get("kind", ""))].append(i)
    for i, e in enumerate(opening.events):
        kind = str(e.get("kind", ""))
        undo = _EVENT_TOOL.get(kind)
        svc = str(e.get("service", ""))
        text = str(e.get("text", ""))
        if undo is None or svc not in by_name:
            continue
        tool = undo
        same_kind = kinds[kind]
        feats = base(by_name[svc]) | {
            "event_newest": 1.0 / (len(same_kind) - same_kind.index(i)),
            "event_oldest": 1.0 / (same_kind.index(i) + 1),
            "event_age": min(1.0, -float(e.get("minute", 0.0)) / 120.0),
            "event_by_bot": float("bot" in str(e.get("by", ""))),
            **_timing(gaps[i], nearest),
        }
        change_words = _change_words(f"{text} by {e.get('by', '')}", by_name)
        if tool == "rollback_migration" and (m := _MIGRATION.search(text)):
            args = {"service": svc, "migration": m.group(1)}
            location = f"migration:{m.group(1)}"
        elif tool == "set_feature_flag" and (m := _FLAG.search(text)):
            args = {"flag": m.group(1), "rollout_percent": 0}
            location = f"flag:{m.group(1)}"
        elif tool == "set_config" and (m := _CONFIG.search(text)):
            args = {"service": svc, "key": m.group(1), "value": _literal(m.group(2))}
            location = f"config:{m.group(1)}"
        else:
            continue
        found.append(
            Candidate(tool, svc, args, location, i, _crossed(tool, feats, words | change_words))
        )
    found += _revert_candidates(opening, by_name, base, words, onset)
    return found


REVERT = "revert_commit"
"""A shallow candidate that is no tool: undo a recent commit's hunks unread (see `revert`)."""

COMMITS_SEEN = 12
"""The newest commits a shallow policy considers reverting."""


def _gap(onset: float | None, minutes_ago: float) -> float:
    """How far a change's time is from the onset the page states (inf when it states none)."""
    return abs(minutes_ago - onset) if onset is not None else math.inf


def _timing(gap: float, nearest: float | None) -> dict[str, float]:
    """A change's time against the page's onset, in buckets a linear model can weigh.

    A cause that lands at the onset the page prints, among herrings drawn around it, is
    named by this alone.
    """
    return {
        "onset_exact": float(gap <= 0.5),
        "onset_within_2": float(gap <= 2.0),
        "onset_within_10": float(gap <= 10.0),
        "onset_within_30": float(gap <= 30.0),
        "onset_nearest": float(nearest is not None and gap <= nearest),
    }


def _change_words(text: str, services: Mapping[str, Any]) -> set[str]:
    """The words of a change (its text, subject, author), service names apart, as features.

    Harmless changes drawn from a fixed list (a flag suffix, a commit subject, a bot's name)
    are told from the cause by their words.
    """
    text = text.lower()
    for name in services:
        text = text.replace(name.lower(), " ").replace(name.lower().replace("-", "_"), " ")
    return {f"cw={w}" for w in _WORD.findall(text)}


def _commit_service(commit: Mapping[str, Any], services: Mapping[str, Any]) -> str | None:
    """The service a commit's message starts with (`checkout_api: ...`), if it runs here."""
    head = str(commit.get("message", "")).partition(":")[0].strip()
    for name in services:
        if head in (name, name.replace("-", "_")):
            return name
    return None


def _revert_candidates(
    opening: Opening,
    services: Mapping[str, Mapping[str, Any]],
    base: Callable[[Mapping[str, Any]], dict[str, float]],
    words: set[str],
    onset: float | None,
) -> list[Candidate]:
    """Reverting each of the newest commits, described by what git_log shows of it."""
    commits = [c for c in opening.commits if c.get("sha")][:COMMITS_SEEN]
    gaps = [_gap(onset, float(c.get("minutes_ago", 0.0))) for c in commits]
    nearest = min(gaps, default=None)
    found = []
    for i, c in enumerate(commits):
        svc = _commit_service(c, services)
        if svc is None:
            continue
        subject = str(c.get("message", "")).partition("\n")[0]
        author = str(c.get("author", ""))
        team = author.partition("@")[2].split("-")[0]
        feats = base(services[svc]) | {
            "commit_rank": 1.0 / (i + 1),
            "commit_age": min(1.0, float(c.get("minutes_ago", 0.0)) / 1440.0),
            "commit_team_is_service": float(bool(team) and svc.startswith(team)),
            **_timing(gaps[i], nearest),
        }
        files = [str(f) for f in c.get("files", ()) if not str(f).startswith("tests/")]
        location = files[0] if files else f"service:{svc}"
        cwords = _change_words(f"{subject} by {author}", services)
        found.append(
            Candidate(
                REVERT,
                svc,
                {"commit": str(c["sha"])},
                location,
                None,
                _crossed(REVERT, feats, words | cwords),
            )
        )
    return found


def _literal(text: str) -> Any:
    """A config value as the change list prints it, back to its type."""
    text = text.strip()
    if text.startswith('"') and text.endswith('"'):
        return text[1:-1]
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


def _crossed(tool: str, feats: Mapping[str, float], words: Iterable[str]) -> dict[str, float]:
    """Each feature alone and with the tool, and each page word with the tool."""
    out: dict[str, float] = {f"tool={tool}": 1.0}
    for k, v in feats.items():
        if v:
            out[k] = v
            out[f"{tool}|{k}"] = v
    for w in sorted(words):  # a set: its order would change the sums, so the ties, by process
        out[f"{tool}|w={w}"] = 1.0
    return out


# --- labels from the reference -------------------------------------------------------------


def _step_keys(steps: Iterable[tuple[str, Mapping[str, Any]]]) -> set[tuple[str, str, str]]:
    keys = set()
    for tool, args in steps:
        svc = str(args.get("service", ""))
        if tool == "rollback_migration":
            keys.add((tool, svc, str(args.get("migration", ""))))
        elif tool == "set_feature_flag":
            keys.add(("set_feature_flag", "*", str(args.get("flag", ""))))
        elif tool == "set_config":
            keys.add((tool, svc, str(args.get("key", ""))))
            keys.add(("rollback_config", svc, ""))
        elif tool in SERVICE_TOOLS:
            keys.add((tool, svc, ""))
    return keys


def is_positive(candidate: Candidate, reference: set[tuple[str, str, str]]) -> bool:
    """Whether `candidate` is one of the reference's operations."""
    tool, _svc, target = candidate.key
    if tool == "set_feature_flag":
        return (tool, "*", target) in reference
    return candidate.key in reference


@dataclass(slots=True)
class Example:
    """One training seed: its opening, the reference's operations and its report."""

    opening: Opening
    reference: set[tuple[str, str, str]]
    report: Mapping[str, Any]
    operations: int
    """How many operations the reference takes."""


def example(opening: Opening, solution: Iterable[tuple[str, Mapping[str, Any]]]) -> Example:
    """A training example from a seed's opening and its reference solution's calls."""
    steps = list(solution)
    report = next((a for t, a in steps if t == "submit_report"), {})
    operations = sum(1 for t, _ in steps if t in SERVICE_TOOLS or t in _EVENT_TOOL.values())
    keys = _step_keys(steps)
    if any(t in CODE_TOOLS for t, _ in steps):
        # A code fix, as a shallow policy would make it: undo the newest commit that touched
        # the file the reference fixes (the culprit's, where the culprit is a commit).
        where = str(report.get("root_cause_location", ""))
        for c in [c for c in opening.commits if c.get("sha")][:COMMITS_SEEN]:
            if where in c.get("files", ()):
                svc = _commit_service(c, {str(r["name"]): r for r in opening.rows})
                keys.add((REVERT, svc or "", str(c["sha"])))
                operations += 1
                break
    return Example(opening, keys, report, operations)


# --- the learner ---------------------------------------------------------------------------


class Logistic:
    """L2-regularised logistic regression on sparse features, fitted by plain SGD.

    Small and deterministic (no shuffling by chance: epochs walk the rows in a fixed order
    rotated by the epoch), which is all a shallow learner over a few thousand rows needs.
    """

    def __init__(self, epochs: int = 30, rate: float = 0.2, l2: float = 1e-3) -> None:
        self.w: dict[str, float] = defaultdict(float)
        self.bias = 0.0
        self.epochs, self.rate, self.l2 = epochs, rate, l2

    def score(self, feats: Mapping[str, float]) -> float:
        """The log-odds of `feats` being positive."""
        return self.bias + sum(self.w.get(k, 0.0) * v for k, v in feats.items())

    def fit(self, rows: Sequence[tuple[Mapping[str, float], bool]]) -> Logistic:
        """Fit to (features, label) rows; positives weigh as much in all as negatives."""
        pos = sum(1 for _, y in rows if y)
        if not rows or pos in (0, len(rows)):
            self.bias = 10.0 if pos else -10.0
            return self
        wpos, wneg = len(rows) / (2 * pos), len(rows) / (2 * (len(rows) - pos))
        n = len(rows)
        # Features as list positions, weights as a list: the same sums in the same order as
        # scoring by name (the fitted weights are identical), at a fraction of the lookups.
        index: dict[str, int] = {k: i for i, k in enumerate(self.w)}
        coded = [
            ([(index.setdefault(k, len(index)), v) for k, v in feats.items()], y)
            for feats, y in rows
        ]
        w = [*self.w.values(), *[0.0] * (len(index) - len(self.w))]
        bias, l2 = self.bias, self.l2
        for epoch in range(self.epochs):
            rate = self.rate / (1 + epoch * 0.2)
            start = (epoch * 7919) % n
            for j in range(n):
                pairs, y = coded[(start + j) % n]
                z = max(-30.0, min(30.0, bias + sum([w[i] * v for i, v in pairs])))
                p = 1.0 / (1.0 + math.exp(-z))
                g = (p - y) * (wpos if y else wneg)
                bias -= rate * g
                for i, v in pairs:
                    w[i] -= rate * (g * v + l2 * w[i])
        self.bias = bias
        self.w = defaultdict(float, zip(index, w, strict=True))
        return self


class Stumps:
    """Gradient-boosted stumps (logistic loss) on sparse features: does a candidate have it.

    What a linear model cannot weigh, a conjunction (the change at the onset *and* of the
    kind this opening's cause usually is), rounds of stumps add up. Plain Python, so each round
    walks each feature's rows once; deterministic (ties go to the first feature met).
    """

    def __init__(self, rounds: int = 200, rate: float = 0.3, least: int = 3) -> None:
        self.bias = 0.0
        self.stumps: list[tuple[str, float, float]] = []
        """(feature, score when present, score when absent)."""
        self.rounds, self.rate, self.least = rounds, rate, least

    def score(self, feats: Mapping[str, float]) -> float:
        """The log-odds of `feats` being positive."""
        return self.bias + sum(a if feats.get(k, 0.0) > 0.0 else b for k, a, b in self.stumps)

    def fit(self, rows: Sequence[tuple[Mapping[str, float], bool]]) -> Stumps:
        """Fit to (features, label) rows; positives weigh as much in all as negatives."""
        n = len(rows)
        pos = sum(1 for _, y in rows if y)
        if not rows or pos in (0, n):
            self.bias = 10.0 if pos else -10.0
            return self
        weight = [n / (2 * pos) if y else n / (2 * (n - pos)) for _, y in rows]
        ys = [1.0 if y else 0.0 for _, y in rows]
        having: dict[str, list[int]] = defaultdict(list)
        for i, (feats, _) in enumerate(rows):
            for k, v in feats.items():
                if v > 0.0:
                    having[k].append(i)
        # Features present on exactly the same rows gain alike, and ties go to the first met:
        # only the first of each set of rows can ever be picked (a crossed feature often has
        # its plain feature's rows).
        seen: set[tuple[int, ...]] = set()
        columns = []
        for k, idx in having.items():
            rows_of = tuple(idx)
            if len(idx) >= self.least and rows_of not in seen:
                seen.add(rows_of)
                columns.append((k, idx))
        margin = [0.0] * n
        for _ in range(self.rounds):
            ps = [1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, m)))) for m in margin]
            g = [wt * (y - p) for wt, y, p in zip(weight, ys, ps, strict=True)]
            h = [wt * p * (1.0 - p) + 1e-9 for wt, p in zip(weight, ps, strict=True)]
            total_g, total_h = sum(g), sum(h)
            best: tuple[float, str, float, float, list[int]] | None = None
            for k, idx in columns:
                gi = sum(map(g.__getitem__, idx))
                hi = sum(map(h.__getitem__, idx))
                go, ho = total_g - gi, total_h - hi
                gain = gi * gi / (hi + 1.0) + go * go / (ho + 1.0)
                if best is None or gain > best[0]:
                    best = (gain, k, gi / (hi + 1.0), go / (ho + 1.0), idx)
            if best is None:
                break
            _, k, inside, outside = best[:4]
            inside, outside = inside * self.rate, outside * self.rate
            self.stumps.append((k, inside, outside))
            present = set(best[4])
            margin = [m + (inside if i in present else outside) for i, m in enumerate(margin)]
        return self


@dataclass(slots=True)
class ShallowLearner:
    """Picks operations and a report from the opening alone, by what worked on training seeds."""

    ops: Logistic | Stumps = field(default_factory=Logistic)
    roots: Logistic | Stumps = field(default_factory=Logistic)
    k: int = 1
    """How many operations to take: the training references' usual count."""
    category: dict[str, str] = field(default_factory=dict)
    remediation: dict[str, str] = field(default_factory=dict)
    usual: dict[str, str] = field(default_factory=dict)
    """The most frequent category and remediation over all training seeds."""

    def fit(self, examples: Sequence[Example]) -> ShallowLearner:
        """Fit both models and the report's tables to the training examples."""
        op_rows: list[tuple[Mapping[str, float], bool]] = []
        root_rows: list[tuple[Mapping[str, float], bool]] = []
        counts: list[int] = []
        by_tool: dict[str, Counter[tuple[str, str]]] = defaultdict(Counter)
        overall: Counter[tuple[str, str]] = Counter()
        for ex in examples:
            cands = candidates(ex.opening)
            positives = [c for c in cands if is_positive(c, ex.reference)]
            counts.append(ex.operations)
            truth = (str(ex.report.get("category", "")), str(ex.report.get("remediation", "")))
            overall[truth] += 1
            for c in cands:
                op_rows.append((c.features, c in positives))
            for c in positives:
                by_tool[c.tool][truth] += 1
            root = str(ex.report.get("root_cause_service", ""))
            for c in cands:
                if c.tool == SERVICE_TOOLS[0]:  # one row per service
                    root_rows.append((c.features, c.service == root))
        self.k = max(0, round(statistics.median(counts))) if counts else 0
        self.ops.fit(op_rows)
        self.roots.fit(root_rows)
        for tool, seen in by_tool.items():
            (cat, rem), _ = seen.most_common(1)[0]
            self.category[tool], self.remediation[tool] = cat, rem
        if overall:
            (cat, rem), _ = overall.most_common(1)[0]
            self.usual = {"category": cat, "remediation": rem}
        return self

    def play(self, caller: ToolCaller, observation: Mapping[str, Any]) -> None:
        """Glance, take the k best-scored operations, report the best-scored root."""
        opening = glance(caller, observation)
        cands = candidates(opening)
        chosen: list[Candidate] = []
        for c in sorted(cands, key=lambda c: -self.ops.score(c.features)):
            if len(chosen) >= self.k:
                break
            if c.key not in {x.key for x in chosen}:
                chosen.append(c)
        for c in chosen:
            operate(caller, c)
        services = [c for c in cands if c.tool == SERVICE_TOOLS[0]]
        lead = chosen[0] if chosen else None
        root = max(services, key=lambda c: self.roots.score(c.features), default=None)
        if lead is not None:
            root_service, location = lead.service, lead.location
            category = self.category.get(lead.tool, self.usual.get("category", "code_bug"))
            remediation = self.remediation.get(lead.tool, self.usual.get("remediation", "code_fix"))
        elif root is not None:
            root_service, location = root.service, f"service:{root.service}"
            category = self.usual.get("category", "code_bug")
            remediation = self.usual.get("remediation", "code_fix")
        else:
            return
        report(caller, root_service, location, category, remediation)


@dataclass(slots=True)
class Retrying:
    """A fitted learner's best candidates in turn, until the step reward says a fault was cured.

    The reward is the one signal an RL policy gets back without investigating; each wrong try
    is an operation the incident did not need, which the grade charges. Needs a caller that
    counts cures (`cures`: EpisodeCaller does; over the wire, the step reward's fault_cured).
    """

    learner: ShallowLearner
    tries: int = 3

    def play(self, caller: ToolCaller, observation: Mapping[str, Any]) -> None:
        """Glance, try the best candidates until a cure, report the last one tried."""
        opening = glance(caller, observation)
        learner = self.learner
        ranked = sorted(candidates(opening), key=lambda c: -learner.ops.score(c.features))
        before = int(getattr(caller, "cures", 0))
        tried: list[Candidate] = []
        for c in ranked:
            if len(tried) == self.tries or int(getattr(caller, "cures", 0)) > before:
                break
            if c.key not in {t.key for t in tried}:
                operate(caller, c)
                tried.append(c)
        if tried:
            lead = tried[-1]
            usual = learner.usual
            report(
                caller,
                lead.service,
                lead.location,
                learner.category.get(lead.tool, usual.get("category", "code_bug")),
                learner.remediation.get(lead.tool, usual.get("remediation", "code_fix")),
            )


RETRYING_LEARNER = "learner-retries"
"""The name validate plays `Retrying` (over the stumps learner) under."""

STUMPS_LEARNER = "learner-stumps"
"""The name validate plays the learner under when its operations are scored by `Stumps`."""


def operate(caller: ToolCaller, c: Candidate) -> None:
    """Apply a candidate; a certificate is named from the service's settings (the soonest due)."""
    args = dict(c.args)
    if c.tool == REVERT:
        revert(caller, str(args["commit"]))
        return
    if c.tool == "renew_certificate":
        got = caller("get_config", {"service": c.service})
        certs = got.data.get("certificates", []) if got.ok else []
        if not certs:
            return
        soonest = min(
            certs, key=lambda x: float(x.get("days_left", x.get("expires_in_days", 1e9)) or 0)
        )
        args["certificate"] = str(soonest.get("name", ""))
    caller(c.tool, args)


def report(
    caller: ToolCaller, service: str, location: str, category: str, remediation: str
) -> None:
    """File the report a shallow policy can write: its guess, in the reference's form."""
    caller(
        "submit_report",
        {
            "root_cause_service": service,
            "root_cause_location": location,
            "category": category,
            "remediation": remediation,
            "summary": f"{service} is the root cause ({location}); remediated by {remediation}.",
        },
    )


# --- the scripts ---------------------------------------------------------------------------

Target = Callable[[Opening, list[Candidate]], list[Candidate]]
"""A way of ordering a remedy's candidates by what the opening shows."""


def _by(feature: str, reverse: bool = True) -> Target:
    def order(_: Opening, cands: list[Candidate]) -> list[Candidate]:
        sign = -1.0 if reverse else 1.0
        return sorted(cands, key=lambda c: sign * c.features.get(feature, 0.0))

    return order


def _non_edge(feature: str) -> Target:
    def order(_: Opening, cands: list[Candidate]) -> list[Candidate]:
        inner = [c for c in cands if not c.features.get("edge")] or cands
        return sorted(inner, key=lambda c: -c.features.get(feature, 0.0))

    return order


def _deepest_unhealthy(_: Opening, cands: list[Candidate]) -> list[Candidate]:
    sick = [
        c for c in cands if c.features.get("unhealthy") or c.features.get("error_rate", 0) > 0.05
    ]
    return sorted(
        sick or cands,
        key=lambda c: (-c.features.get("depth", 0.0), -c.features.get("rank_error_rate", 0.0)),
    )


def _at_onset(_: Opening, cands: list[Candidate]) -> list[Candidate]:
    """The change nearest the page's onset; for a service, one changed at the onset."""
    return sorted(
        cands,
        key=lambda c: (
            -c.features.get("onset_nearest", 0.0),
            -c.features.get("changed_at_onset", 0.0),
            -c.features.get("rank_error_rate", 0.0),
        ),
    )


TARGETS: dict[str, Target] = {
    "loudest": _by("rank_error_rate"),
    "loudest-inner": _non_edge("rank_error_rate"),
    "alerted": _by("first_alert"),
    "alerted-inner": _non_edge("first_alert"),
    "slowest": _by("rank_p99_ms"),
    "hottest-cpu": _by("rank_cpu"),
    "fullest-memory": _by("rank_memory"),
    "longest-queue": _by("rank_queue_depth"),
    "deepest-unhealthy": _deepest_unhealthy,
    "newest-change": _by("newest_change"),
    "newest-of-kind": _by("event_newest"),
    "oldest-of-kind": _by("event_oldest"),
    "at-onset": _at_onset,
}
"""The target rules a script combines with a remedy."""

REMEDY_TOOLS: dict[str, tuple[str, ...]] = {
    "rollback_config": ("set_config",),
    "clean_disk": ("set_config", "clean_disk"),
}
"""The candidate tools that carry out a remedy, when not the tool of its own name."""


@dataclass(frozen=True, slots=True)
class Script:
    """One fixed rule: remedies aimed by a target rule, reported as the family usually is.

    With one remedy it is the rule "this family is fixed by R on the T"; with all of the
    family's remedies it is the shotgun of that rule (each unneeded operation costs).
    """

    remedies: tuple[str, ...]
    target: str
    category: str

    @property
    def name(self) -> str:
        """`remedy@target`, or `every-remedy@target`."""
        head = self.remedies[0] if len(self.remedies) == 1 else "every-remedy"
        return f"{head}@{self.target}"

    def play(self, caller: ToolCaller, observation: Mapping[str, Any]) -> None:
        """Glance, take each remedy on the rule's first target for it, report the first."""
        opening = glance(caller, observation)
        cands = candidates(opening)
        services = [c for c in cands if c.tool == SERVICE_TOOLS[0]]
        reported: tuple[Candidate, str] | None = None
        for remedy in self.remedies:
            tools = REMEDY_TOOLS.get(remedy, (remedy,))
            first = [c for c in cands if c.tool == tools[0]]
            if not first and tools[0] == "set_config":  # no push listed: revert the newest
                tools = ("rollback_config", *tools[1:])
                first = [c for c in cands if c.tool == "rollback_config"]
            if remedy == "code_fix" or not first:
                lead = TARGETS[self.target](opening, services)[0] if services else None
                if lead is not None and reported is None:
                    reported = (
                        Candidate(lead.tool, lead.service, {}, f"service:{lead.service}"),
                        remedy,
                    )
                continue
            lead = TARGETS[self.target](opening, first)[0]
            operate(caller, lead)
            for tool in tools[1:]:
                for c in cands:
                    if c.tool == tool and c.service == lead.service:
                        operate(caller, c)
                        break
            if reported is None:
                reported = (lead, remedy)
        if reported is not None:
            lead, remedy = reported
            report(caller, lead.service, lead.location, self.category, remedy)


def revert(caller: ToolCaller, sha: str) -> None:
    """Undo a commit's hunks in the working tree, bottom-up, as `git revert` would.

    What a policy that never reads the code can do to a commit (tests/ is read-only).
    """
    shown = caller("git_show", {"commit": sha})
    hunks = [
        h
        for h in parse_diff(str(shown.data.get("diff", "")))
        if shown.ok
        if not h.path.startswith("tests/")
    ]
    for h in sorted(hunks, key=lambda h: (h.path, h.new_start), reverse=True):
        caller(
            "edit_lines",
            {
                "path": h.path,
                "action": "replace" if h.new else "insert",
                "start_line": h.new_start if h.new else h.new_start + 1,
                **({"end_line": h.new_start + len(h.new) - 1} if h.new else {}),
                "content": "\n".join(h.old),
            },
        )


REVERT_RULES = (
    "newest",
    "second-newest",
    "third-newest",
    "newest-on-loudest",
    "every-recent",
    "nearest-onset",
    "newest-unfamiliar",
)
"""Which commits a revert script undoes: the newest (or the second or third newest); the newest
on the loudest inner service (a commit's message starts with its service); every commit of the
last six hours; the one nearest the onset the page states; the newest whose subject the
training seeds never showed as harmless work (harmless commits drawn from a fixed list of
subjects leave the culprit the one subject not on it)."""

_TICKET = re.compile(r"\s*\([A-Z]+-\d+\)\s*$")


def subject(commit: Mapping[str, Any]) -> str:
    """A commit's subject without its service prefix and ticket: what repeats across seeds."""
    line = str(commit.get("message", "")).partition("\n")[0]
    return _TICKET.sub("", line.partition(":")[2] or line).strip().lower()


def familiar_subjects(examples: Sequence[Example]) -> frozenset[str]:
    """Subjects the training seeds' logs show at least twice and never as the culprit."""
    seen: Counter[str] = Counter()
    culprits: set[str] = set()
    for ex in examples:
        culprit = {key[2] for key in ex.reference if key[0] == REVERT}
        for c in ex.opening.commits[:COMMITS_SEEN]:
            seen[subject(c)] += 1
            if str(c.get("sha")) in culprit:
                culprits.add(subject(c))
    return frozenset(s for s, n in seen.items() if n >= 2 and s not in culprits)


@dataclass(frozen=True, slots=True)
class Revert:
    """The code-fix rule an RL policy finds first: undo recent commits, never read them."""

    rule: str
    category: str
    familiar: frozenset[str] = frozenset()
    """Subjects of harmless work (see `familiar_subjects`), for `newest-unfamiliar`."""

    @property
    def name(self) -> str:
        """`revert@rule`."""
        return f"revert@{self.rule}"

    def play(self, caller: ToolCaller, observation: Mapping[str, Any]) -> None:
        """Glance, revert the rule's commits, report the first one's service and file."""
        opening = glance(caller, observation)
        commits = [c for c in opening.commits if c.get("sha")]
        if not commits:
            return
        picked = commits[:1]
        if self.rule in ("second-newest", "third-newest"):
            rank = 1 if self.rule == "second-newest" else 2
            picked = commits[rank : rank + 1] or picked
        elif self.rule == "every-recent":
            picked = [c for c in commits if float(c.get("minutes_ago", 1e9)) <= 360] or picked
        elif self.rule == "nearest-onset":
            onset = opening.onset
            picked = [min(commits, key=lambda c: _gap(onset, float(c.get("minutes_ago", 0.0))))]
        elif self.rule == "newest-unfamiliar":
            picked = [c for c in commits if subject(c) not in self.familiar][:1] or picked
        elif self.rule == "newest-on-loudest":
            cands = candidates(opening)
            services = [c for c in cands if c.tool == SERVICE_TOOLS[0]]
            ranked = TARGETS["loudest-inner"](opening, services) if services else []
            loud = ranked[0].service.replace("-", "_") if ranked else ""
            mine = [c for c in commits if str(c.get("message", "")).startswith(f"{loud}:")]
            picked = mine[:1] or picked
        for commit in picked:
            revert(caller, str(commit["sha"]))
        first = picked[0]
        service = str(first.get("message", "")).partition(":")[0]
        files = [str(f) for f in first.get("files", ()) if not str(f).startswith("tests/")]
        location = files[0] if files else f"service:{service}"
        report(caller, service, location, self.category, "code_fix")


def scripts(examples: Sequence[Example]) -> list[Script | Revert]:
    """Every script for the remedies the training seeds use, alone and all together."""
    usual: dict[str, Counter[str]] = defaultdict(Counter)
    for ex in examples:
        rem = str(ex.report.get("remediation", ""))
        if rem:
            usual[rem][str(ex.report.get("category", ""))] += 1
    found: list[Script | Revert] = [
        Script((rem,), target, cats.most_common(1)[0][0])
        for rem, cats in sorted(usual.items())
        for target in TARGETS
    ]
    if len(usual) > 1:
        ranked = sorted(usual, key=lambda r: -sum(usual[r].values()))
        top = usual[ranked[0]].most_common(1)[0][0]
        found += [Script(tuple(ranked), target, top) for target in TARGETS]
    if "code_fix" in usual:
        category = usual["code_fix"].most_common(1)[0][0]
        familiar = familiar_subjects(examples)
        found += [Revert(rule, category, familiar) for rule in REVERT_RULES]
    return found


__all__ = [
    "GLANCES",
    "RETRYING_LEARNER",
    "STUMPS_LEARNER",
    "TARGETS",
    "Candidate",
    "Example",
    "Logistic",
    "Opening",
    "Retrying",
    "Script",
    "ShallowLearner",
    "Stumps",
    "candidates",
    "example",
    "glance",
    "scripts",
]
