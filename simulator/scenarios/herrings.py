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

Three more make the rows themselves ambiguous, where a cause's generator puts its root loudest
and alone among the sick inner rows (the learner then needs no change list at all):

- weather: healthy inner services made sick from outside (`WeatherSpec`: since before the
  onset, shaped like one of the fault's rows, their own logs naming the outside dependency);
- dealt-out loudness: the fault's inner rows trade their signals among themselves;
- changes on every sick row: pushes and releases on the symptoms and the weather as on the
  root, timed like the world's own changes of the kind.

Each was found by comparing what the learner reads of the root and of the other sick rows over
training seeds; the families' comments say which one needed which.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from .spec import (
    ConfigPushSpec,
    DeploymentSpec,
    FaultSpec,
    FlagSpec,
    ScenarioSpec,
    WeatherSpec,
)

WEATHER: tuple[tuple[str, str], ...] = (
    ("maps-vendor", "geocoding lookups"),
    ("sms-gateway", "SMS deliveries"),
    ("card-psp", "card authorisations"),
    ("email-relay", "email sends"),
    ("tax-quotes-api", "tax quotes"),
    ("fx-rates-feed", "currency rates"),
    ("identity-verifier", "ID checks"),
)
"""Outside dependencies whose trouble a weather row shows: (name, what it serves)."""

_LOUDEST = (0.22, 0.4)
"""The range of the highest error rate a fault adds to a row once its loudness is dealt out."""

_SICK = 0.09
"""The least error rate a dealt-out row keeps if it had more: clear of the health line (5%)."""

_PEOPLE = ("lena", "ravi", "tomasz", "mei", "dan", "sofia")
"""Who pushes harmless config: the people the config causes' culprits are pushed by (two more
names here were two words that only ever meant "harmless" to the learner)."""


@dataclass(frozen=True, slots=True)
class Herrings:
    """What a symptom-first family adds to each seed (its `[herrings]` table)."""

    flags: tuple[tuple[str, str], ...] = ()
    """Flag name suffixes and descriptions; each seed ramps two (see module docstring)."""
    releases: bool = False
    """Whether each seed ships two harmless releases."""
    config_pushes: tuple[tuple[str, Any, Any], ...] = ()
    """(key, before, after) of harmless settings; each seed pushes two on services lacking it.
    `{dep}` in a key or a string value is one of the service's dependencies."""
    hot_rows: bool = False
    """Whether each seed runs one healthy service hot (CPU or memory near its limit)."""
    noisy_rows: bool = False
    """Whether each seed has one chronically flaky leaf service (5-9% errors, its normal)."""
    commits: tuple[tuple[str, str, str], ...] = ()
    """(subject, setting, value) of harmless work; each seed lands `commit_count` commits
    shipping one each around the culprit (see scenarios.herring_commits)."""
    commit_count: int = 2
    bump_count: int = 0
    """How many of the `commit_count` commits bump a library another package vendors, as a
    culprit bump does (with `borrowed`, where the seed's tree vendors libraries at all)."""
    release_count: int = 2
    """How many harmless releases each seed ships (with `releases`): two is one on a row the
    page points at and one elsewhere, drawn at any time around the onset; more is all but one
    on sick rows (the root too, unless its release is the fault), timed like the world's own
    recent releases."""
    push_count: int = 2
    """How many harmless config pushes each seed lands (with `config_pushes`): one elsewhere,
    the rest on sick inner services other than the root (its symptoms and the weather's rows
    alike); one more lands on the paging edge."""
    weather: int = 0
    """How many healthy inner services each seed makes sick from outside (see WEATHER)."""
    shuffle_loudness: bool = False
    """Whether the fault's inner rows trade how loud they are, so the root is as likely the
    loudest as each of its inner symptoms."""
    borrowed: bool = False
    """Whether harmless changes are named as the causes' culprits are: other teams' commits
    carry another site's culprit message, harmless flags another site's culprit flag, harmless
    pushes the key and values of a culprit push (aimed at the pushing service's own callee).
    A fixed list of herring names is a list of what not to undo: the culprit was the change
    named off it."""
    pager_pushes: int = 1
    """How many of the harmless pushes land on the paging edge (with `config_pushes`)."""
    site_pushes: int = 0
    """How many culprit pushes of other sites land whole on their own services (`borrowed`)."""
    flag_count: int = 2
    """How many harmless flags each seed ramps (with `flags`): two is one on a row the page
    points at and one elsewhere; more is all but one on sick rows (the root too)."""
    flag_rampers: tuple[str, ...] = ("flag-bot (scheduled ramp)", "dev-console (self-serve)")
    """Who ramps the harmless flags: the family names the people its culprits are ramped by."""
    leading_pushes: tuple[tuple[str, Any, Any, int, int, int], ...] = ()
    """(key, before, after, least lead, most lead, count): pushes that land on `count` sick inner
    rows other than the root every seed, the lead's minutes before the onset. A cause whose
    push precedes its onset by a long way (a log level raised to DEBUG an hour before the disk
    fills) is otherwise the one push of its kind and age on the list."""
    shuffle_rows: bool = False
    """Whether the dashboard lists the inner rows in an order the seed draws (the paging rows
    first). In the platform's fixed order, "the first of the rows that tie" is a fixed service,
    which scores whenever a test split happens to hold many seeds of that service's sites."""
    near_onset: float = 0.0
    """The share of harmless changes (releases, pushes, flags) that land 0-LAG minutes before
    the onset, as the culprit does (`mix._lagged` dates it so): "undo what changed when it
    started" (the page and the alert say when) must meet as many of them as it meets culprits."""

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
            bump_count=int(table.get("bump_count", 0)),
            push_count=int(table.get("push_count", 2)),
            release_count=int(table.get("release_count", 2)),
            weather=int(table.get("weather", 0)),
            shuffle_loudness=bool(table.get("shuffle_loudness", False)),
            near_onset=float(table.get("near_onset", 0.0)),
            flag_count=int(table.get("flag_count", 2)),
            site_pushes=int(table.get("site_pushes", 0)),
            pager_pushes=int(table.get("pager_pushes", 1)),
            flag_rampers=tuple(
                str(r)
                for r in table.get(
                    "flag_rampers", ("flag-bot (scheduled ramp)", "dev-console (self-serve)")
                )
            ),
            borrowed=bool(table.get("borrowed", False)),
            leading_pushes=tuple(
                (
                    str(h["key"]),
                    h["before"],
                    h["after"],
                    int(h["lead"][0]),
                    int(h["lead"][1]),
                    int(h.get("count", 1)),
                )
                for h in table.get("leading_pushes", ())
            ),
            shuffle_rows=bool(table.get("shuffle_rows", False)),
        )


def _pools(spec: ScenarioSpec) -> tuple[list[str], list[str]]:
    """The rows that look sick (the symptoms; the root when it looks sick), and the others.

    Both sorted. A root that looks healthy (a skewed host, a certificate's owner) is not among
    the first: harmless changes aimed at the sick rows and the root made it the healthy row
    with a fresh change (edge-errors: sync_clock on it met 8 of 15 skewed hosts).
    """
    truth = spec.ground_truth
    names = {s.name for s in spec.services}
    moved = {svc for f in spec.faults for svc, e in f.effects.items() if any(e.values())}
    root = {truth.service} if truth.service in moved or not moved else set()
    sick = sorted({*root, *truth.symptom_services} & names)
    return sick, sorted(names - set(sick))


def _two(rng: random.Random, sick: Sequence[str], rest: Sequence[str]) -> list[str]:
    """One service the page points at and one elsewhere (fewer if a pool is empty)."""
    return [rng.choice(pool) for pool in (sick, rest) if pool]


def _spread(sick: Sequence[str], rest: Sequence[str], count: int, rng: random.Random) -> list[str]:
    """`count` services: all but one on sick rows (the root too), one elsewhere.

    Enough of them that every sick row has a fresh change: a root whose cause is no change
    (a crash loop, a surge) must not be the one sick row without one.
    """
    others = list(sick)
    rng.shuffle(others)
    return others[: max(0, count - 1)] + ([rng.choice(rest)] if rest else [])


def _mirror(
    times: Sequence[float], rng: random.Random, spread: tuple[float, float] = (0.4, 2.2)
) -> Callable[[], float]:
    """Minutes ago drawn like `times` (the world's own changes of a kind), spread by a factor."""

    def ago() -> float:
        return float(max(2, round(rng.choice(times) * rng.uniform(*spread))))

    return ago


def _ago(rng: random.Random, onset: float) -> float:
    return float(round(rng.uniform(2.0, onset + 60.0)))


LAG = 5
"""The most minutes a change lands before the onset it causes (a rollout, a ramp, a push
picked up): a symptom-first family dates its culprit 0-LAG minutes before the onset, and a
harmless change drawn near the onset lands in the same way, so no clock tells them apart."""


def _near(
    ago: Callable[[], float], rng: random.Random, onset: float, share: float
) -> Callable[[], float]:
    """`ago`, but `share` of the times drawn 0-LAG minutes before the onset, as the culprit is."""
    if share <= 0.0:
        return ago

    def drawn() -> float:
        if rng.random() < share:
            # As the culprit lands, 0-LAG minutes before the onset. Half of them used to land
            # after it, where no cause can: among the changes near the onset the culprit was
            # then the earliest more often than not, and "the first of those that tie" read it
            # (edge's flags, shop's releases).
            return float(max(1, round(onset) + rng.randint(0, LAG)))
        return ago()

    return drawn


def _split_share(items: Sequence[Any], test: bool) -> Sequence[Any]:
    """Every fourth of `items` for test seeds, the others for training seeds.

    All of them where there are fewer than four.
    """
    if len(items) < 4:
        return items
    return [x for i, x in enumerate(items) if (i % 4 == 0) == test]


def _prefix(service: str) -> str:
    return service.split("-")[0].replace("_", "")


def _next_version(version: str, rng: random.Random) -> str:
    head, _, last = version.rpartition(".")
    if head and last.isdigit():
        return f"{head}.{int(last) + rng.randint(1, 3)}"
    return f"{version}-r{rng.randint(2, 9)}"


def _depths(spec: ScenarioSpec) -> dict[str, int]:
    """Each service's distance from the platform's edge (services nothing calls)."""
    called = {d for s in spec.services for d in s.depends_on}
    calls = {s.name: s.depends_on for s in spec.services}
    depth = {s.name: 0 for s in spec.services if s.name not in called}
    frontier = sorted(depth)
    while frontier:
        nxt = []
        for name in frontier:
            for dep in calls.get(name, ()):
                if dep not in depth:
                    depth[dep] = depth[name] + 1
                    nxt.append(dep)
        frontier = nxt
    return depth


def _shuffled(fault: FaultSpec, inner: set[str], rng: random.Random) -> FaultSpec:
    """`fault` with its inner rows' error rates and latencies dealt out again among them.

    A fault shows loudest at its root in most generators; a symptom-first family must not let
    "the loudest inner row" name the root. The edge keeps its own (its alerts are the page).
    """
    effects = {svc: dict(e) for svc, e in fault.effects.items()}
    # The inner rows' loudest error rate is brought under a ceiling well below "down" (a down
    # row logs nothing, and weather must be able to outshout it while its own logs still say
    # what ails it), drawn per seed (a fixed one would be the root's exact error rate where it
    # was the loudest). The edge keeps its own: its alerts are the page, its checks must fail
    # at the start.
    loudest = max(
        (e.get("error_rate", 0.0) for svc, e in effects.items() if svc in inner), default=0.0
    )
    ceiling = rng.uniform(*_LOUDEST)
    if loudest > ceiling:
        for svc, e in effects.items():
            if svc in inner and e.get("error_rate", 0.0) > 0.0:
                # Still sick: a row the grader checks healthy at the end is unhealthy now.
                scaled = e["error_rate"] * ceiling / loudest
                e["error_rate"] = round(max(scaled, min(e["error_rate"], _SICK)), 4)
    rows = sorted(s for s in effects if s in inner)
    for metric in sorted({m for e in effects.values() for m in e}):
        have = [s for s in rows if effects[s].get(metric, 0.0) > 0.0]
        values = [effects[s][metric] for s in have]
        rng.shuffle(values)
        for service, value in zip(have, values, strict=True):
            was = effects[service][metric]
            # Each row stays as sick as the health line wants (a quiet share on a row that
            # was loud would make it pass its healthy check before anything was done).
            effects[service][metric] = (
                max(value, min(was, _SICK)) if metric == "error_rate" else value
            )
    return fault.model_copy(update={"effects": effects})


def _add_weather(
    spec: ScenarioSpec,
    update: dict[str, Any],
    services: dict[str, Any],
    rest: Sequence[str],
    inner: set[str],
    count: int,
    rng: random.Random,
) -> list[str]:
    """Make `count` healthy inner services sick from outside; returns them.

    Each shows like one of the fault's rows (see below), sick since before
    the onset, and says in its own logs what ails it: an outside dependency of its own.
    """
    faults = update.get("faults", spec.faults)
    onset = max((f.onset_minutes_ago for f in faults), default=0.0)

    # Each weather row shows like one of the fault's rows, drawn alike (its signals, each a
    # little louder or quieter): a row sick on every signal would tell itself from a root
    # that moves only some.
    profiles = [
        dict(e) for f in faults for svc, e in sorted(f.effects.items()) if e and svc in inner
    ]
    profiles = profiles or [dict(e) for f in faults for _, e in sorted(f.effects.items()) if e]
    root_profile = next(
        (
            dict(e)
            for f in faults
            for svc, e in f.effects.items()
            if svc == spec.ground_truth.service
        ),
        None,
    )
    # As deep as the root first, then the nearest depths: "the deepest sick row" (or the
    # shallowest) must meet weather as often as the root.
    depth = _depths(spec)
    root = depth.get(spec.ground_truth.service, 0)
    pool = sorted(s for s in rest if s in inner)
    rng.shuffle(pool)
    pool.sort(key=lambda s: abs(depth.get(s, 0) - root))
    weather = list(spec.weather)
    rows = pool[:count]
    for service in rows:
        vendor, what = rng.choice(WEATHER)
        since = float(round(onset + rng.uniform(30.0, 240.0)))
        # The root's own shape half the time: its symptoms often move fewer signals than it.
        if root_profile and rng.random() < 0.5:
            profile = root_profile
        else:
            profile = rng.choice(profiles) if profiles else {"error_rate": 0.2, "p99_ms": 800.0}
        for metric, value in sorted(profile.items()):
            if value <= 0.0:
                continue
            delta = value * rng.uniform(0.75, 1.3)
            if metric == "error_rate":
                delta = min(delta, 0.49)  # sick, not down: a down row logs nothing
            weather.append(
                WeatherSpec(
                    service=service,
                    metric=metric,
                    delta=round(delta, 3),
                    since_minutes_ago=since,
                )
            )
        logs = (
            *services[service].logs,
            f"ERROR external dependency {vendor} answered 503 Service Unavailable for {what}",
            f"WARN external dependency {vendor} slow for {what} ({{ms}}00 ms): its status page"
            " lists an open incident",
        )
        services[service] = services[service].model_copy(update={"logs": logs})
    update["weather"] = tuple(weather)
    return rows


def add_herrings(
    spec: ScenarioSpec,
    herrings: Herrings,
    rng: random.Random,
    paging: frozenset[str] = frozenset(),
    borrowed_flags: Mapping[str, Sequence[tuple[str, str]]] = MappingProxyType({}),
    borrowed_pushes: Sequence[tuple[str, Any, Any]] = (),
    borrowed_sites: Sequence[tuple[str, str, Any, Any]] = (),
    test: bool = False,
) -> dict[str, Any]:
    """The spec fields that change when `herrings` are added to `spec` (for model_copy).

    `paging`: the services whose alerts page, when the family names them; every other service
    is an inner row. By default the inner rows are those something calls. `borrowed_flags`:
    the causes' culprit flags by service (name, description), which harmless flags reuse;
    `borrowed_pushes`: the causes' culprit pushes, which join the harmless pushes' pool;
    `borrowed_sites`: the same whole, on their own services (`site_pushes` of them land).
    `test`: whether the seed is a test seed; harmless flags named from the family's list take
    a quarter of it there and the rest on training seeds (no name crosses the split).
    """
    onset = max((f.onset_minutes_ago for f in spec.faults), default=0.0)
    sick, rest = _pools(spec)
    services = {s.name: s for s in spec.services}
    update: dict[str, Any] = {}
    if paging:  # a consumer nothing calls is an inner row where only the storefront pages
        inner = {s.name for s in spec.services} - paging
    else:
        inner = {d for s in spec.services for d in s.depends_on}
    inner_sick = [s for s in sick if s in inner]
    weather_rows: list[str] = []
    # These two draw from `rng` only where a family asks for them: the families that do not
    # keep every seed's world as it was.
    if herrings.shuffle_loudness:
        update["faults"] = tuple(_shuffled(f, inner, rng) for f in spec.faults)
    if herrings.weather:
        weather_rows = _add_weather(spec, update, services, rest, inner, herrings.weather, rng)

    # Weather rows are sick rows like the root's symptoms: harmless changes land on them alike.
    sick = sorted({*sick, *weather_rows})
    rest = [s for s in rest if s not in weather_rows]

    if herrings.flags:
        taken = {f.name for f in spec.flags}
        flags = list(spec.flags)
        flag_ago = _near(functools.partial(_ago, rng, onset), rng, onset, herrings.near_onset)
        if herrings.flag_count > 2:
            targets = _spread(sick, rest, herrings.flag_count, rng)
        else:
            targets = _two(rng, sick, rest)
        for service in targets:
            borrowable = [f for f in borrowed_flags.get(service, ()) if f[0] not in taken]
            if borrowable:  # another site's culprit flag of this service: named as culprits are
                name, description = rng.choice(borrowable)
            else:
                suffix, description = rng.choice(_split_share(herrings.flags, test))
                name = f"{_prefix(service)}.{suffix}"
            if name in taken:
                continue
            taken.add(name)
            flags.append(
                FlagSpec(
                    name=name,
                    service=service,
                    rollout_percent=100.0,
                    minutes_ago=flag_ago(),
                    by=rng.choice(herrings.flag_rampers),
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
        ago: Callable[[], float]
        if herrings.release_count == 2:
            targets, ago = _two(rng, sick, rest), functools.partial(_ago, rng, onset)
        else:
            targets = _spread(sick, rest, herrings.release_count, rng)
            ago = _mirror(
                [d.minutes_ago for d in deployments if d.minutes_ago < 1440.0] or [onset],
                rng,
                # A bad release lands at the onset, the newest change of most seeds: as many
                # harmless ones come after it as before.
                (0.25, 1.6),
            )
        ago = _near(ago, rng, onset, herrings.near_onset)
        for service in targets:
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
            deployments.append(DeploymentSpec(service=service, version=new, minutes_ago=ago()))
            services[service] = services[service].model_copy(update={"version": new})
        # Releases are listed in the order they went out.
        update["deployments"] = tuple(sorted(deployments, key=lambda d: -d.minutes_ago))

    if herrings.config_pushes or borrowed_pushes:
        pushes = list(spec.config_pushes)
        # Timed like the pushes the fault's world already has (a bad push lands at the onset, a
        # log level an hour before its disk fills): neither "the newest push" nor "the oldest"
        # finds the culprit by rule.
        ago = _near(
            _mirror([p.minutes_ago for p in pushes] or [onset], rng),
            rng,
            onset,
            herrings.near_onset,
        )
        # One elsewhere, the rest on the sick inner rows: a rule "undo the push on the loudest
        # (or deepest, or only) sick service" meets a harmless push as often as the culprit.
        # Not the root: it has its culprit already, and each push elsewhere is one more
        # sick row a rule must tell from it.
        sick_inner = sorted({*inner_sick, *weather_rows} - {spec.ground_truth.service})
        rng.shuffle(sick_inner)
        targets = sick_inner[: max(0, herrings.push_count - 1)] + (
            [rng.choice(rest)] if rest else []
        )
        # And one on the paging edge: a root at the edge is where the alerts are, so "undo the
        # alerted service's push" must meet a harmless one there too.
        pagers = [s for s in sick if s not in inner]
        for _ in range(herrings.pager_pushes if pagers else 0):
            targets.append(rng.choice(pagers))
        for service in targets:
            deps = sorted(services[service].depends_on)
            # A "{dep}" key or value names one of the service's own dependencies, as the
            # culprits' keys do (a timeout, retries or host of a callee): a service that calls
            # nothing takes the plain keys only.
            free = [
                h
                for h in (*herrings.config_pushes, *borrowed_pushes)
                if (deps or "{dep}" not in h[0]) and h[0] not in services[service].config
            ]
            if not free:
                continue
            key, before, after = rng.choice(free)
            if "{dep}" in key:
                dep = rng.choice(deps)
                key, before, after = (
                    v.replace("{dep}", dep) if isinstance(v, str) else v
                    for v in (key, before, after)
                )
            if any(p.service == service and p.key == key for p in pushes):
                continue  # a key pushed already (the culprit's own) is no herring's
            # A key the service already sets (a callee's timeout) is pushed from its value.
            before = services[service].config.get(key, before)
            if before == after:
                continue
            config = {**services[service].config, key: before}
            services[service] = services[service].model_copy(update={"config": config})
            # People of the service's team push, as they push the culprits.
            by = f"{rng.choice(_PEOPLE)}@{_prefix(service)}-team"
            pushes.append(
                ConfigPushSpec(service=service, key=key, value=after, minutes_ago=ago(), by=by)
            )
        # Culprit pushes of other sites, on the services they hit there: the pushes a herring
        # lands on a sick row go where the sick rows are, culprits where their sites are, and
        # a learner read which services take culprits off the hosts' names.
        whole = [
            (host, key, before, after)
            for host, key, before, after in borrowed_sites
            if host in services
            and host != spec.ground_truth.service
            and ("-" not in key.split(".", 1)[0] or key.split(".", 1)[0] in services)
            and not any(p.service == host and p.key == key for p in pushes)
        ]
        for _ in range(herrings.site_pushes):
            if not whole:
                break
            host, key, before, after = rng.choice(whole)
            whole = [w for w in whole if w[0] != host]
            before = services[host].config.get(key, before)
            if before == after:
                continue
            services[host] = services[host].model_copy(
                update={"config": {**services[host].config, key: before}}
            )
            by = f"{rng.choice(_PEOPLE)}@{_prefix(host)}-team"
            pushes.append(
                ConfigPushSpec(service=host, key=key, value=after, minutes_ago=ago(), by=by)
            )
        for key, before, after, least, most, count in herrings.leading_pushes:
            hosts = [
                s for s in sick_inner if not any(p.service == s and p.key == key for p in pushes)
            ]
            for host in hosts[:count]:
                was = services[host].config.get(key, before)
                if was == after:
                    continue
                services[host] = services[host].model_copy(
                    update={"config": {**services[host].config, key: was}}
                )
                by = f"{rng.choice(_PEOPLE)}@{_prefix(host)}-team"
                ago_ = float(round(onset) + rng.randint(least, most))
                pushes.append(
                    ConfigPushSpec(service=host, key=key, value=after, minutes_ago=ago_, by=by)
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

    order = [s.name for s in spec.services]
    if herrings.shuffle_rows:
        inner_rows = [s for s in order if s in inner]
        rng.shuffle(inner_rows)
        order = [s for s in order if s not in inner] + inner_rows
    if order != [s.name for s in spec.services] or any(
        services[s.name] is not s for s in spec.services
    ):
        update["services"] = tuple(services[name] for name in order)
    return update


__all__ = ["Herrings", "add_herrings"]
