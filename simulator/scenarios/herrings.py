"""Harmless changes and odd rows a symptom-first family adds to every seed's world.

A shallow rule reads the opening: the newest change of a kind, the flag or release of the
deepest unhealthy service, the hottest row, the noisiest row. Each herring here makes one such
rule as likely to point at something harmless as at the cause, and undoing a harmless change
is an operation the incident did not need (it costs, as any). Two rules keep them honest:

- nothing singles the root out: a herring on "a service the page points at" is drawn alike
  from the root and the services its fault shows through, never on the root by rule (a
  herring only on the root is a label, and the shallow learner in `metasre validate` finds it);
- times are drawn alike around the onset, before or after it, so "the newest" is not the
  cause's by rule either.

A herring changes only what it adds: a new flag, a new release of an unchanged build, a new
config key, a service's healthy baseline. No fault reads any of them.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from metasre.simulator.scenarios.spec import (
    ConfigPushSpec,
    DeploymentSpec,
    FlagSpec,
    ScenarioSpec,
)


@dataclass(frozen=True, slots=True)
class Herrings:
    """What a symptom-first family adds to each seed (its `[herrings]` table)."""

    flags: tuple[tuple[str, str], ...] = ()
    """Flag name suffixes and descriptions; each seed ramps two (see module docstring)."""
    releases: bool = False
    """Whether each seed ships two harmless releases."""
    config_pushes: tuple[tuple[str, Any, Any], ...] = ()
    """(key, before, after) of harmless settings; each seed pushes two on services lacking it."""
    hot_rows: bool = False
    """Whether each seed runs one healthy service hot (CPU or memory near its limit)."""
    noisy_rows: bool = False
    """Whether each seed has one chronically flaky leaf service (5-9% errors, its normal)."""
    commits: tuple[tuple[str, str, str], ...] = ()
    """(subject, setting, value) of harmless work; each seed lands `commit_count` commits
    shipping one each around the culprit (see scenarios.herring_commits)."""
    commit_count: int = 2

    @classmethod
    def from_table(cls, table: Mapping[str, Any]) -> Herrings:
        """From a family's `[herrings]` table."""
        return cls(
            flags=tuple((str(h["suffix"]), str(h["description"])) for h in table.get("flags", ())),
            releases=bool(table.get("releases", False)),
            config_pushes=tuple(
                (str(h["key"]), h["before"], h["after"]) for h in table.get("config_pushes", ())
            ),
            hot_rows=bool(table.get("hot_rows", False)),
            noisy_rows=bool(table.get("noisy_rows", False)),
            commits=tuple(
                (str(h["subject"]), str(h["setting"]), str(h["value"]))
                for h in table.get("commits", ())
            ),
            commit_count=int(table.get("commit_count", 2)),
        )


def _pools(spec: ScenarioSpec) -> tuple[list[str], list[str]]:
    """The services the page points at (root and symptoms) and the others, sorted."""
    truth = spec.ground_truth
    names = {s.name for s in spec.services}
    sick = sorted({truth.service, *truth.symptom_services} & names)
    return sick, sorted(names - set(sick))


def _two(rng: random.Random, sick: Sequence[str], rest: Sequence[str]) -> list[str]:
    """One service the page points at and one elsewhere (fewer if a pool is empty)."""
    return [rng.choice(pool) for pool in (sick, rest) if pool]


def _ago(rng: random.Random, onset: float) -> float:
    return float(round(rng.uniform(2.0, onset + 60.0)))


def _prefix(service: str) -> str:
    return service.split("-")[0].replace("_", "")


def _next_version(version: str, rng: random.Random) -> str:
    head, _, last = version.rpartition(".")
    if head and last.isdigit():
        return f"{head}.{int(last) + rng.randint(1, 3)}"
    return f"{version}-r{rng.randint(2, 9)}"


def add_herrings(spec: ScenarioSpec, herrings: Herrings, rng: random.Random) -> dict[str, Any]:
    """The spec fields that change when `herrings` are added to `spec` (for model_copy)."""
    onset = max((f.onset_minutes_ago for f in spec.faults), default=0.0)
    sick, rest = _pools(spec)
    services = {s.name: s for s in spec.services}
    update: dict[str, Any] = {}

    if herrings.flags:
        taken = {f.name for f in spec.flags}
        flags = list(spec.flags)
        for service in _two(rng, sick, rest):
            suffix, description = rng.choice(herrings.flags)
            name = f"{_prefix(service)}.{suffix}"
            if name in taken:
                continue
            taken.add(name)
            by = rng.choice(("flag-bot (scheduled ramp)", "dev-console (self-serve)"))
            flags.append(
                FlagSpec(
                    name=name,
                    service=service,
                    rollout_percent=100.0,
                    minutes_ago=_ago(rng, onset),
                    by=by,
                    description=description,
                )
            )
        update["flags"] = tuple(flags)

    if herrings.releases:
        deployments = list(spec.deployments)
        # A newer build of a broken release carries the same bug: no herring where a release
        # is the fault, or where a fault reads which build runs (a code bug shipped in one).
        shipped_bad = {
            f.service for f in spec.faults if f.kind == "deployment" or "bad_version" in f.params
        }
        for service in _two(rng, sick, rest):
            mine = [d for d in deployments if d.service == service]
            if service in shipped_bad:
                continue
            current = mine[-1].version if mine else services[service].version
            if any(d.minutes_ago < 1.0 for d in mine):
                continue
            if not mine:  # the release it replaces, so that it can be rolled back
                deployments.append(
                    DeploymentSpec(
                        service=service,
                        version=current,
                        minutes_ago=float(rng.randint(7, 40) * 1440),
                    )
                )
            new = _next_version(current, rng)
            deployments.append(
                DeploymentSpec(service=service, version=new, minutes_ago=_ago(rng, onset))
            )
            services[service] = services[service].model_copy(update={"version": new})
        # Releases are listed in the order they went out.
        update["deployments"] = tuple(sorted(deployments, key=lambda d: -d.minutes_ago))

    if herrings.config_pushes:
        pushes = list(spec.config_pushes)
        for service in _two(rng, sick, rest):
            free = [h for h in herrings.config_pushes if h[0] not in services[service].config]
            if not free:
                continue
            key, before, after = rng.choice(free)
            config = {**services[service].config, key: before}
            services[service] = services[service].model_copy(update={"config": config})
            by = rng.choice(("config-bot@ci", "ana@sre-team", "kofi@growth-team"))
            pushes.append(
                ConfigPushSpec(
                    service=service, key=key, value=after, minutes_ago=_ago(rng, onset), by=by
                )
            )
        update["config_pushes"] = tuple(sorted(pushes, key=lambda p: -p.minutes_ago))

    # A flaky row among the leaves (the services that call nothing), where "the deepest
    # unhealthy service" looks for a root; a hot row anywhere.
    leaves = sorted(s.name for s in spec.services if not s.depends_on)
    for wanted, kind in ((herrings.hot_rows, "hot"), (herrings.noisy_rows, "noisy")):
        if not wanted:
            continue
        service = rng.choice(leaves if kind == "noisy" and leaves else [*sick, *rest])
        base = services[service].baseline
        if kind == "hot":
            signal = rng.choice(("cpu", "memory"))
            changed = base.model_copy(update={signal: round(rng.uniform(0.78, 0.9), 3)})
        else:
            changed = base.model_copy(update={"error_rate": round(rng.uniform(0.05, 0.09), 4)})
        services[service] = services[service].model_copy(update={"baseline": changed})

    if any(services[s.name] is not s for s in spec.services):
        update["services"] = tuple(services[s.name] for s in spec.services)
    return update


__all__ = ["Herrings", "add_herrings"]
