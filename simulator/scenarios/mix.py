"""Symptom-first families: one opening, many causes.

A symptom-first family is named for what the on-call sees (errors at the edge, a slow
platform), not for what broke. Its `scenario.toml` lists its **causes**: families of one
platform, each with its own sites, mechanisms and remedies (a config push, a full disk, a
retry storm, ...). The seed picks a cause (in stratified cycles, as an axis of tables) and that
cause's structure; the incident is the cause's world, opened the way every seed of the family
opens: one page written for the symptom, alerts only on the symptom's signals at the platform's
edge, no terminal line that names a mechanism. So the opening does not tell the remedy or its
target; finding them takes the investigation the cause's world supports.

A cause folder stays a family of its own (its tests and generators keep working), listed and
served, but marked `part_of` the symptom-first family: served alone it is solvable from its
opening (its page names its mechanism), which `metasre validate` shows, so results are
reported on the family it is part of.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..observation import Opening
from .errors import InvalidScenarioError
from .herring_commits import add_herring_commits
from .herrings import LAG, Herrings, add_herrings
from .loader import (
    ScenarioInstance,
    is_test_seed,
    load_instance,
    load_spec,
    read_scenario_id,
    read_toml,
    split_axis,
)
from .spec import AlertRule, ScenarioSpec, ServiceSpec

_MINUTES = re.compile(r"(\d+)\s+min")


@dataclass(frozen=True, slots=True)
class Mix:
    """A symptom-first family: its page and the families that are its causes."""

    id: str
    title: str
    severity: str
    page: str
    """The page every seed opens with; `{minutes}` is how long ago the symptom started."""
    causes: tuple[Path, ...]
    """The cause families' folders, in the order the seed's cycles walk."""
    cause_ids: tuple[str, ...]
    alert_metrics: frozenset[str]
    """The signals whose alerts page (the symptom's); the others' rules are dropped."""
    edge_only: bool
    """Whether only the platform's entry points (services nothing calls) page."""
    seed_varies: tuple[str, ...]
    sla_minutes: float
    """Every seed's SLA: a cause's own would be on the pager and name the cause."""
    step_budget: int
    """Every seed's step budget, for the same reason."""
    herrings: Herrings = field(default_factory=Herrings)
    """What every seed adds to its cause's world (see scenarios.herrings)."""
    paging: frozenset[str] = frozenset()
    """The services whose alerts page, where the platform's entry points are not simply the
    services nothing calls (a queue consumer is called by no one and pages no one)."""
    same_size: bool = False
    """Whether every seed runs about as many services, whatever its cause (see `_padded`)."""
    messages: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """The causes' culprit commit messages by the package they name: other teams' commits
    borrow them (see scenarios.herring_commits)."""
    bumps: tuple[tuple[str, str, str], ...] = ()
    """The causes' culprit library bumps, (library, from, to): other teams' harmless bumps of
    their own vendored copies borrow them (see scenarios.herring_commits)."""
    pushes: tuple[tuple[str, Any, Any], ...] = ()
    """The causes' culprit config pushes as (key, before, after), the callee a key or value
    names written `{dep}`: harmless pushes borrow them (see scenarios.herrings)."""
    sites: tuple[tuple[str, str, Any, Any], ...] = ()
    """The same pushes whole, (service, key, before, after), on the service a culprit has."""
    flags: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    """The causes' culprit flags by service, (name, description), of their training sites:
    harmless flags of training seeds borrow them (with `[herrings] borrowed`), so a flag's name
    does not say culprit."""
    test_flags: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    """The same of the causes' test sites, which test seeds borrow: no name crosses the split,
    or the culprit's is the one name of a test seed that training never showed."""


def _culprit_tables(paths: tuple[Path, ...]) -> list[dict[str, Any]]:
    """Every variant table the causes write (each cause's scenario.toml read once), in order."""
    return [
        t
        for folder in paths
        for tables in read_toml(folder / "scenario.toml").get("variants", {}).values()
        for t in tables
        if isinstance(t, dict)
    ]


def _culprit_sites(tables: list[dict[str, Any]]) -> tuple[tuple[str, str, Any, Any], ...]:
    """Every culprit config push the causes write, whole: (service, key, before, after)."""
    return tuple(
        (str(t["service"]), t["config_key"], t["good"], t["bad"])
        for t in tables
        if isinstance(t.get("config_key"), str)
        and "{{" not in t["config_key"]
        and "good" in t
        and "bad" in t
    )


def _culprit_pushes(
    sites: tuple[tuple[str, str, Any, Any], ...],
) -> tuple[tuple[str, Any, Any], ...]:
    """The culprit pushes with the callee a key or value names written `{dep}`.

    Repeats stay, so that a harmless push takes each shape as often as a culprit does.
    """
    found: list[tuple[str, Any, Any]] = []
    for _, key, before, after in sites:
        head = key.split(".", 1)[0]
        # "<service>.timeout_ms" names a callee; "db.pool_size" and "region" do not.
        callee = head if "-" in head else None

        def named(v: Any, callee: str | None = callee) -> Any:
            return v.replace(callee, "{dep}") if callee and isinstance(v, str) else v

        item = (named(key), named(before), named(after))
        if item[0].endswith(".host") and "{dep}" not in str(item[2]):
            continue  # a host renamed outright ("menus.courier...") fits no other callee
        found.append(item)
    return tuple(found)


def _split_tables(paths: tuple[Path, ...]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The causes' tables of their split axes: (training split's, test split's)."""
    train: list[dict[str, Any]] = []
    test: list[dict[str, Any]] = []
    for folder in paths:
        split = split_axis(folder)
        if split is None:
            continue
        axis, _, tested = split
        tables = read_toml(folder / "scenario.toml").get("variants", {}).get(axis, [])
        for i, t in enumerate(tables):
            if isinstance(t, dict):
                (test if i in tested else train).append(t)
    return train, test


def _culprit_flags(
    tables: list[dict[str, Any]],
) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
    """Every culprit flag the causes write, by service: (name, description)."""
    by: dict[str, list[tuple[str, str]]] = {}
    for t in tables:
        flag = t.get("flag")
        if isinstance(flag, str) and "{{" not in flag and isinstance(t.get("service"), str):
            item = (flag, str(t.get("description", "")))
            if item not in by.setdefault(t["service"], []):
                by[t["service"]].append(item)
    return tuple((k, tuple(v)) for k, v in sorted(by.items()))


def _culprit_messages(tables: list[dict[str, Any]]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Every culprit commit message the causes write, by package (`pkg: subject`)."""
    by: dict[str, list[str]] = {}
    for t in tables:
        message = t.get("message")
        if isinstance(message, str) and "{{" not in message and ": " in message:
            package = message.split(": ", 1)[0]
            if message not in by.setdefault(package, []):
                by[package].append(message)
    return tuple((k, tuple(v)) for k, v in sorted(by.items()))


def _culprit_bumps(tables: list[dict[str, Any]]) -> tuple[tuple[str, str, str], ...]:
    """Every vendored library bump the causes' culprits make: (library, from, to)."""
    return tuple(
        sorted(
            {
                (t["lib"], t["old"], t["new"])
                for t in tables
                if all(
                    isinstance(t.get(k), str) and "{{" not in t[k] for k in ("lib", "old", "new")
                )
            }
        )
    )


def read_mix(folder: Path, scenarios: Path) -> Mix | None:
    """The mix a folder declares (`causes = [...]`), or None for an ordinary family."""
    raw = read_toml(folder / "scenario.toml")
    causes = raw.get("causes")
    if causes is None:
        return None
    if not isinstance(causes, list) or len(causes) < 2:
        raise InvalidScenarioError(
            f"{folder.name}/scenario.toml: 'causes' lists two folders or more"
        )
    paths = tuple(scenarios / str(c) for c in causes)
    for p in paths:
        if not (p / "scenario.toml").is_file():
            raise InvalidScenarioError(f"{folder.name}: cause {p.name!r} has no scenario.toml")
    herrings = Herrings.from_table(raw.get("herrings", {}))
    if herrings.commits and herrings.commit_count > len(herrings.commits):
        raise InvalidScenarioError(
            f"{folder.name}/scenario.toml: [herrings] commit_count = {herrings.commit_count}"
            f" needs as many [[herrings.commits]] (it has {len(herrings.commits)}): two commits"
            " shipping one setting let one of them be undone unseen"
        )
    tables = _culprit_tables(paths)
    train_tables, test_tables = _split_tables(paths)
    sites = _culprit_sites(tables)
    try:
        return Mix(
            id=str(raw["id"]),
            title=str(raw["title"]),
            severity=str(raw.get("severity", "P1")),
            page=str(raw["page"]),
            causes=paths,
            cause_ids=tuple(read_scenario_id(p) for p in paths),
            alert_metrics=frozenset(raw.get("alert_metrics", ["error_rate", "p99_ms"])),
            edge_only=bool(raw.get("edge_only", True)),
            paging=frozenset(str(p) for p in raw.get("paging", ())),
            seed_varies=tuple(raw.get("seed_varies", ())),
            sla_minutes=float(raw["sla_minutes"]),
            step_budget=int(raw["step_budget"]),
            herrings=herrings,
            same_size=bool(raw.get("same_size", False)),
            messages=_culprit_messages(tables),
            bumps=_culprit_bumps(tables),
            flags=_culprit_flags(train_tables),
            test_flags=_culprit_flags(test_tables),
            pushes=_culprit_pushes(sites),
            sites=sites,
        )
    except KeyError as exc:
        raise InvalidScenarioError(f"{folder.name}/scenario.toml lacks {exc.args[0]!r}") from exc


def cause_of(mix: Mix, seed: int) -> tuple[Path, int]:
    """The cause folder and that family's seed for `seed` of the mix.

    Causes are walked in stratified cycles (every len(causes) seeds meet each once, a cause
    listed twice twice). The cause's own seed counts that cause's turns: its k-th turn plays
    its seed k, so the first seeds of the mix meet each cause's structures as its own first
    seeds do, in its stratified cycles. (With the mix's seed as the cause's, a cause met every
    n-th seed of its own cycles: marketplace-slow's first 27 test seeds of slow-query met two
    of its eight test tables on ten seeds and two on one.)
    """
    n = len(mix.causes)
    cycle, position = divmod(seed, n)
    order = list(range(n))
    random.Random(f"{mix.id}:cause:{cycle}").shuffle(order)
    folder = mix.causes[order[position]]
    turns = sum(1 for c in mix.causes if c == folder)
    before = sum(1 for p in order[:position] if mix.causes[p] == folder)
    return folder, cycle * turns + before


def _edges(spec: ScenarioSpec) -> set[str]:
    called = {d for s in spec.services for d in s.depends_on}
    return {s.name for s in spec.services if s.name not in called}


def _paging(mix: Mix, spec: ScenarioSpec) -> set[str]:
    """The services whose alerts page: the family's named ones, else the platform's edges."""
    return set(mix.paging) or _edges(spec)


_METRIC_WORDS = {
    "error_rate": "error rate",
    "p99_ms": "p99 latency",
    "cpu": "CPU",
    "memory": "memory",
    "queue_depth": "queue depth",
    "business": "business metric",
}


def _summary(alert: AlertRule) -> str:
    """An alert's summary in the words every seed's alerts use.

    A cause's own summary may name an endpoint or a mechanism (`5xx on GET /v1/users/{id}`).
    """
    words = _METRIC_WORDS.get(alert.metric, alert.metric)
    if alert.above is not None:
        limit = f"above {alert.above:g}" + (" ms" if alert.metric == "p99_ms" else "")
    else:
        limit = f"below {alert.below:g}"
    return f"{alert.service} {words} {limit}"


CATALOGUE_SEEDS = 24
"""Seeds of each cause read to learn the services a mix's platform runs (see `_catalogue`)."""


@lru_cache(maxsize=16)
def _catalogue(mix: Mix) -> tuple[MappingProxyType[str, ServiceSpec], int]:
    """Every service the mix's causes run on some seed (as first met), and the most one runs."""
    seen: dict[str, ServiceSpec] = {}
    most = 0
    for folder in dict.fromkeys(mix.causes):
        for cseed in range(CATALOGUE_SEEDS):
            services = load_spec(folder, cseed).services
            most = max(most, len(services))
            for s in services:
                seen.setdefault(s.name, s)
    return MappingProxyType(seen), most


def _padded(mix: Mix, spec: ScenarioSpec, seed: int) -> tuple[ServiceSpec, ...]:
    """The cause's services and enough of the platform's others, healthy, to run as many as any.

    Causes generated apart run platforms of their own sizes (one always 11 services, another
    13-19): the dashboard's length would name the cause. Each seed runs the most any cause runs,
    plus 0-2, the others taken from the services the causes run on other seeds, called by
    whoever calls them there (or by the edge), calling what is here, with no code of their own.
    """
    seen, most = _catalogue(mix)
    rng = random.Random(f"{mix.id}:size:{seed}")
    services = {s.name: s for s in spec.services}
    missing = sorted(set(seen) - set(services))
    rng.shuffle(missing)
    add = missing[: max(0, most + rng.randint(0, 2) - len(services))]
    edges = sorted(_paging(mix, spec))
    for name in add:
        services[name] = seen[name].model_copy(update={"code_dir": None, "depends_on": ()})
    for name in add:
        deps = tuple(d for d in seen[name].depends_on if d in services)
        services[name] = services[name].model_copy(update={"depends_on": deps})
        callers = [c for c in sorted(seen) if name in seen[c].depends_on and c in services]
        caller = callers[0] if callers else rng.choice(edges)
        was = services[caller]
        if name not in was.depends_on:
            services[caller] = was.model_copy(update={"depends_on": (*was.depends_on, name)})
    return tuple(services.values())


def _lagged(spec: ScenarioSpec, onset: float, seed: int, mix: Mix) -> dict[str, Any]:
    """The changes made at the onset, dated 0-LAG minutes before it (for model_copy).

    A change takes effect a while after it is made (a rollout, a ramp, pods picking a push
    up). The causes date their culprit at the onset to the minute, so the alert's time dated
    the culprit; herrings near the onset are drawn with the same lag (scenarios.herrings).
    """
    if not mix.herrings.near_onset:
        return {}
    lag = float(random.Random(f"{mix.id}:lag:{seed}").randint(0, LAG))
    update: dict[str, Any] = {}
    for name in ("deployments", "config_pushes", "flags", "migrations"):
        changes = getattr(spec, name)
        moved = tuple(
            c.model_copy(update={"minutes_ago": c.minutes_ago + lag})
            if abs(c.minutes_ago - onset) < 0.5
            else c
            for c in changes
        )
        if moved != changes:
            update[name] = moved
    return update


def mixed_spec(mix: Mix, spec: ScenarioSpec, seed: int) -> ScenarioSpec:
    """The cause's spec opened as the mix opens: its page, its alerts, no telling terminal."""
    if mix.same_size:
        spec = spec.model_copy(update={"services": _padded(mix, spec, seed)})
    onset = max((f.onset_minutes_ago for f in spec.faults), default=0.0)
    found = _MINUTES.search(spec.description)
    minutes = int(found.group(1)) if found else round(onset)
    # Customers notice a while after the change that hurt them: a page that dated the symptom
    # to the minute would date the culprit change with it.
    minutes = max(1, minutes - random.Random(f"{mix.id}:page:{seed}").randint(0, 3))
    edges = _paging(mix, spec)
    alerts = tuple(
        a.model_copy(update={"summary": _summary(a)})
        for a in spec.alerts
        if a.metric in mix.alert_metrics and (not mix.edge_only or a.service in edges)
    )
    faults = tuple(f.model_copy(update={"terminal": ()}) for f in spec.faults)
    rng = random.Random(f"{mix.id}:herrings:{seed}")
    tested = mixed_is_test(mix, seed)
    spec = spec.model_copy(update={"faults": faults, **_lagged(spec, onset, seed, mix)})
    return spec.model_copy(
        update={
            "id": mix.id,
            "title": mix.title,
            "severity": mix.severity,
            "description": mix.page.format(minutes=minutes),
            "sla_minutes": mix.sla_minutes,
            "step_budget": mix.step_budget,
            "alerts": alerts,
            "seed_varies": mix.seed_varies,
            **add_herrings(
                spec,
                mix.herrings,
                rng,
                mix.paging,
                dict(mix.test_flags if tested else mix.flags) if mix.herrings.borrowed else {},
                mix.pushes if mix.herrings.borrowed else (),
                mix.sites if mix.herrings.borrowed else (),
                test=tested,
            ),
        }
    )


def mixed_load_spec(mix: Mix, seed: int) -> ScenarioSpec:
    """The mix's spec for `seed` (no code tree).

    Without the tree there are no herring commits, so its PASS_TO_PASS list lacks their checks:
    grading reads `mixed_instance`'s spec, never this one.
    """
    folder, cseed = cause_of(mix, seed)
    return mixed_spec(mix, load_spec(folder, cseed), seed)


@lru_cache(maxsize=256)
def mixed_instance(mix: Mix, seed: int) -> ScenarioInstance:
    """The mix's incident for `seed`: the cause's world under the mix's opening."""
    folder, cseed = cause_of(mix, seed)
    inst = load_instance(folder, cseed)
    spec, tree, hidden = mixed_spec(mix, inst.spec, seed), inst.tree, inst.hidden_files
    if mix.herrings.commits:
        rng = random.Random(f"{mix.id}:commits:{seed}")
        tree, hidden, update = add_herring_commits(
            spec,
            tree,
            hidden,
            mix.herrings.commits,
            mix.herrings.commit_count,
            rng,
            dict(mix.messages) if mix.herrings.borrowed else {},
            bumps=mix.bumps if mix.herrings.borrowed else (),
            bump_count=mix.herrings.bump_count,
        )
        spec = spec.model_copy(update=update)
    return ScenarioInstance(
        spec=spec,
        seed=seed,
        values=MappingProxyType(dict(inst.values)),
        tree=tree,
        hidden_files=hidden,
        opening=Opening(),
    )


def mixed_is_test(mix: Mix, seed: int) -> bool:
    """A mix's seed is a test seed when its cause's seed is one of that cause's test seeds."""
    folder, cseed = cause_of(mix, seed)
    return is_test_seed(folder, cseed)


def mix_values(mix: Mix, seed: int) -> dict[str, Any]:
    """Which cause a seed drew, for tools that explain a seed (never shown to agents)."""
    folder, cseed = cause_of(mix, seed)
    return {"cause": read_scenario_id(folder), "cause_seed": cseed}


__all__ = [
    "Mix",
    "cause_of",
    "mix_values",
    "mixed_instance",
    "mixed_is_test",
    "mixed_load_spec",
    "mixed_spec",
    "read_mix",
]
