"""Reads a scenario folder (and its topology) and builds one seed's instance of it."""

from __future__ import annotations

import hashlib
import threading
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, ValidationError

from ..errors import HistoryError
from ..history import Commit, load_history_dir
from ..lru import Lru
from ..observation import Opening
from ..vfs import BaseTree
from .errors import InvalidScenarioError
from .render import Renderer, draw_values, draw_variants, drop_unwanted
from .spec import ScenarioSpec

SCENARIOS_DIR = Path(__file__).resolve().parent
TOPOLOGIES_DIR = SCENARIOS_DIR / "_topologies"


@dataclass(frozen=True, slots=True)
class ScenarioInstance:
    """One scenario rendered for one seed: its spec, code tree and hidden checks."""

    spec: ScenarioSpec
    """The validated, rendered scenario description."""
    seed: int
    """The seed it was rendered for."""
    values: MappingProxyType[str, Any]
    """The variable values the seed drew."""
    tree: BaseTree
    """The shared, immutable code tree agents see at the incident's start."""
    hidden_files: MappingProxyType[str, bytes]
    """Grader-only check files, by path (`hidden/...`); never part of `tree`."""
    opening: Opening = field(default_factory=Opening, compare=False, repr=False)
    """What every episode of this instance shows before its first call, filled in by the first
    episode that gets there; one instance per seed is kept, so its episodes share it."""


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file's data; an unreadable file is an InvalidScenarioError naming it."""
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InvalidScenarioError(f"cannot read {path}: {exc}") from exc


_APPENDED = ("deployments", "migrations", "config_pushes", "flags", "certificates", "queues")
"""Topology tables a scenario's own entries follow (oldest first), rather than replace."""


def _merge_services(
    base: list[dict[str, Any]], extra: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """A scenario's service entries laid over the topology's.

    Field by field, and `config` key by key: a scenario that adds one key keeps the others.
    """
    merged = {s["name"]: dict(s) for s in base}
    for s in extra:
        target = merged.setdefault(s["name"], {})
        config = {**target.get("config", {}), **s.get("config", {})}
        target.update(s)
        if config:
            target["config"] = config
    return list(merged.values())


def _deployment_versions(raw: dict[str, Any]) -> None:
    """Make each service's `version` the one its last deployment shipped."""
    last: dict[str, str] = {}
    for d in sorted(raw.get("deployments", []), key=lambda d: -float(d["minutes_ago"])):
        last[d["service"]] = d["version"]
    for s in raw.get("services", []):
        if s["name"] in last:
            s["version"] = last[s["name"]]


def _prune_dependencies(raw: dict[str, Any]) -> None:
    """Drop dependency edges to services this seed's structure left out (`when` false)."""
    present = {s["name"] for s in raw.get("services", [])}
    for s in raw.get("services", []):
        if "depends_on" in s:
            s["depends_on"] = [d for d in s["depends_on"] if d in present]


def read_scenario_id(folder: Path) -> str:
    """Return the id a scenario folder declares, without rendering it."""
    raw = read_toml(folder / "scenario.toml")
    sid = raw.get("id")
    if not isinstance(sid, str):
        raise InvalidScenarioError(f"{folder / 'scenario.toml'} has no string 'id'")
    return sid


_NOT_SPEC = ("variables", "variants", "retired", "split", "part_of", "shallow_held")
"""Top-level keys of scenario.toml that steer rendering and are not part of the rendered spec."""

TEST_SHARE = 0.25
"""The share of the split axis's tables whose seeds form a family's test split."""


def split_axis(folder: Path) -> tuple[str, int, frozenset[int]] | None:
    """The axis whose tables decide a seed's split, its table count and its test tables.

    `[split] axis = "..."` in scenario.toml names the axis; by default it is the axis with the
    most tables (the one that chooses where the fault lives). The test tables are a fixed
    quarter of them (at least one), picked by a hash of the family's name, so no structure of
    the test split ever occurs in a training seed. None: the family has no axis with two
    tables, so it cannot be split.
    """
    raw, _ = _raw(folder)
    variants: dict[str, Any] = raw.get("variants", {})
    declared = raw.get("split", {}).get("axis") if isinstance(raw.get("split"), dict) else None
    if declared is not None:
        if declared not in variants:
            raise InvalidScenarioError(
                f"{folder.name}/scenario.toml: [split] axis {declared!r} is not one of its "
                f"[variants] axes ({', '.join(sorted(variants)) or 'none'})"
            )
        axis = str(declared)
    else:
        sized = sorted(variants, key=lambda a: (-len(variants[a]), a))
        if not sized or len(variants[sized[0]]) < 2:
            return None
        axis = sized[0]
    n = len(variants[axis])
    return axis, n, test_tables(str(raw.get("id", folder.name)), axis, n)


def test_tables(family_id: str, axis: str, n: int) -> frozenset[int]:
    """Which of the `n` tables of `axis` make `family_id`'s test split.

    Its version aside, so a family keeps its split across versions. Authoring reads it too: a
    nuisance an axis deals out by table (a bad migration's place in its batch) is dealt evenly
    within each split.
    """
    name = family_id.rsplit("-v", 1)[0]
    order = sorted(range(n), key=lambda i: hashlib.sha256(f"{name}:{axis}:{i}".encode()).digest())
    return frozenset(order[: max(1, round(n * TEST_SHARE))])


def structure(folder: Path, seed: int) -> tuple[tuple[str, int], ...]:
    """The structure `seed` draws: the table index of each of the family's variant axes."""
    raw, _ = _raw(folder)
    choices: dict[str, list[Any]] = raw.get("variants", {})
    values = draw_variants(str(raw.get("id")), seed, choices)
    return tuple(
        (axis, next(i for i, c in enumerate(choices[axis]) if c is values[axis]))
        for axis in sorted(values)
    )


def is_test_seed(folder: Path, seed: int) -> bool:
    """Whether `seed` belongs to the family's test split (see split_axis)."""
    split = split_axis(folder)
    if split is None:
        return False
    axis, _, test = split
    return dict(structure(folder, seed))[axis] in test


def read_retired_ids(folder: Path) -> tuple[str, ...]:
    """The older ids a scenario folder replaces (`retired = [...]`).

    A request for one of them gets an error naming the folder's id.
    """
    retired = read_toml(folder / "scenario.toml").get("retired", [])
    if not isinstance(retired, list) or not all(isinstance(r, str) for r in retired):
        raise InvalidScenarioError(f"{folder / 'scenario.toml'}: 'retired' must be a list of ids")
    return tuple(retired)


@lru_cache(maxsize=64)
def _raw(folder: Path) -> tuple[dict[str, Any], dict[str, Any] | None]:
    raw = read_toml(folder / "scenario.toml")
    topo = None
    if "topology" in raw:
        topo_dir = TOPOLOGIES_DIR / str(raw["topology"])
        if not (topo_dir / "topology.toml").is_file():
            raise InvalidScenarioError(
                f"{folder.name} names topology {raw['topology']!r}, but {topo_dir} has no "
                "topology.toml"
            )
        topo = read_toml(topo_dir / "topology.toml")
    return raw, topo


def load_instance(folder: Path, seed: int) -> ScenarioInstance:
    """Render the scenario in `folder` for `seed`.

    Renderings are cached by the variable values the seed draws, so seeds that draw the same
    values share one tree (and its blame cache); each rendering keeps one instance per seed.
    """
    values, key = _drawn(folder, seed)
    built = _cached(folder, key)
    if built is None:
        made = _build(folder, key)
        built = _BUILT.setdefault((folder, key), _Built(*made))
    return built.instance(seed, values)


def rendered_instance(folder: Path, seed: int) -> ScenarioInstance | None:
    """`load_instance(folder, seed)` if it needs no rendering (about 0.1 ms, not 10); else None."""
    values, key = _drawn(folder, seed)
    built = _cached(folder, key)
    if built is None:
        return None
    return built.instance(seed, values)


def _cached(folder: Path, key: _Key) -> _Built | None:
    return _BUILT.get((folder, key))


_Key = tuple[tuple[str, int], ...]
"""A rendering's key: each variant axis and variable with the position of its drawn choice."""
_Parts = tuple[ScenarioSpec, BaseTree, MappingProxyType[str, bytes]]
"""What rendering makes: the spec, the code tree and the hidden files."""


@dataclass(slots=True)
class _Built:
    """One rendering (the values some seeds draw) and its instances, one per seed."""

    spec: ScenarioSpec
    tree: BaseTree
    hidden: MappingProxyType[str, bytes]
    instances: Lru[int, ScenarioInstance] = field(default_factory=lambda: Lru(_SEEDS_PER_RENDERING))
    """By seed: kept with the rendering, not beyond it."""

    def instance(self, seed: int, values: dict[str, Any]) -> ScenarioInstance:
        with _BUILT_LOCK:  # two threads asking for one seed get one instance
            found = self.instances.get(seed)
            if found is None:
                found = ScenarioInstance(
                    self.spec, seed, MappingProxyType(values), self.tree, self.hidden
                )
                self.instances.put(seed, found)
            return found


# Renderings by the values their seed drew; an explicit cache (not lru_cache) so that a caller
# can take a rendered instance without rendering: the service renders in a worker thread only
# when it must. Nearly every seed draws values of its own, so this bounds the instances too.
_SEEDS_PER_RENDERING = 64
_BUILT: Lru[tuple[Path, _Key], _Built] = Lru(256)
_BUILT_LOCK = threading.Lock()


def reload() -> None:
    """Forget every scenario file read and rendering made: files just written are read anew.

    For authoring tools that rewrite a family in a running process; a server never needs it
    (families never change in place). The pool of shared spec entries stays: it is keyed by
    value.
    """
    _raw.cache_clear()
    forget_renderings()


def forget_renderings() -> None:
    """Forget every rendering made (the files read stay): the next instance renders cold."""
    _spec.cache_clear()
    _BUILT.clear()


def _drawn(folder: Path, seed: int) -> tuple[dict[str, Any], _Key]:
    raw, _ = _raw(folder)
    sid = str(raw.get("id"))
    try:
        values = draw_variants(sid, seed, raw.get("variants", {}))
        values.update(draw_values(sid, seed, raw.get("variables", {})))
    except ValueError as exc:
        raise InvalidScenarioError(f"{folder.name}/scenario.toml: {exc}") from exc
    choices = _choices(folder)
    # The draws return the list's own objects: their positions are the rendering's key.
    key = tuple(
        sorted((k, next(i for i, c in enumerate(choices[k]) if c is v)) for k, v in values.items())
    )
    return values, key


def load_spec(folder: Path, seed: int) -> ScenarioSpec:
    """The scenario in `folder` rendered for `seed`, without its code tree (about 1 ms)."""
    return _spec(folder, _drawn(folder, seed)[1])


def _choices(folder: Path) -> dict[str, list[Any]]:
    raw, _ = _raw(folder)
    return {**raw.get("variants", {}), **raw.get("variables", {})}


def _renderer(folder: Path, key: _Key) -> Renderer:
    choices = _choices(folder)
    return Renderer({name: choices[name][index] for name, index in key})


@lru_cache(maxsize=1024)
def _spec(folder: Path, key: _Key) -> ScenarioSpec:
    raw, topo = _raw(folder)
    renderer = _renderer(folder, key)
    merged = {k: v for k, v in raw.items() if k not in _NOT_SPEC}
    if topo is not None:
        merged["services"] = _merge_services(topo.get("services", []), raw.get("services", []))
    try:
        rendered = drop_unwanted(renderer.data(merged))
        if topo is not None:
            # After rendering: a family may give a whole table as one template ("{{x.queues}}").
            for table in _APPENDED:
                mine = rendered.get(table) or []
                if topo.get(table):
                    theirs = drop_unwanted(renderer.data(topo[table]))
                    rendered[table] = [*theirs, *(mine if isinstance(mine, list) else [mine])]
        rendered["variables"] = raw.get("variables", {})
        _prune_dependencies(rendered)
        _deployment_versions(rendered)
        return _shared(ScenarioSpec.model_validate(rendered))
    except (ValidationError, ValueError) as exc:
        raise InvalidScenarioError(f"{folder.name}/scenario.toml: {exc}") from exc


_SHARED_TABLES = (
    "services",
    "deployments",
    "migrations",
    "alerts",
    "config_pushes",
    "flags",
    "certificates",
    "queues",
)
_POOL: Lru[tuple[str, str], BaseModel] = Lru(65536)


def _shared(spec: ScenarioSpec) -> ScenarioSpec:
    """`spec` with its topology's entries shared with every other seed's that has them equal.

    Most of a family's seeds render most services, releases and alerts identically; the spec is
    frozen, so one object can serve them all (a new seed's spec costs its differences, not the
    whole platform again).
    """
    update: dict[str, tuple[BaseModel, ...]] = {}
    with _BUILT_LOCK:
        for table in _SHARED_TABLES:
            entries = getattr(spec, table)
            shared = []
            for entry in entries:
                key = (type(entry).__name__, entry.model_dump_json())
                known = _POOL.peek(key)
                if known is None:
                    _POOL.put(key, entry)
                    known = entry
                shared.append(known)
            update[table] = tuple(shared)
    return spec.model_copy(update=update)


def _build(folder: Path, key: _Key) -> _Parts:
    raw, topo = _raw(folder)
    spec = _spec(folder, key)
    renderer = _renderer(folder, key)

    commits: list[Commit] = []
    history_dirs = []
    if topo is not None:
        history_dirs.append(TOPOLOGIES_DIR / str(raw["topology"]) / "history")
    history_dirs.append(folder / "history")
    files: dict[str, str] = {}
    for hdir in history_dirs:
        if not hdir.is_dir():
            continue
        try:
            commits += load_history_dir(
                hdir, renderer.text, files, commits[-1].sha if commits else None
            )
        except (HistoryError, ValueError) as exc:
            raise InvalidScenarioError(f"{folder.name}: {exc}") from exc
    if not commits:
        raise InvalidScenarioError(f"{folder.name} has no history: its code tree would be empty")
    tree = BaseTree.from_commits(commits)
    hidden: dict[str, bytes] = {}
    hidden_dir = folder / "hidden"
    if hidden_dir.is_dir():
        for path in sorted(hidden_dir.rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            rel = "hidden/" + path.relative_to(hidden_dir).as_posix()
            hidden[rel] = renderer.text(path.read_text(encoding="utf-8")).encode()
    return spec, tree, MappingProxyType(hidden)
