"""The registry of scenarios: every folder under `simulator/scenarios/` with a scenario.toml."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .errors import UnknownScenarioError
from .loader import (
    SCENARIOS_DIR,
    ScenarioInstance,
    is_test_seed,
    load_instance,
    load_spec,
    read_retired_ids,
    read_scenario_id,
    read_toml,
    rendered_instance,
)
from .mix import (
    Mix,
    cause_of,
    mixed_instance,
    mixed_is_test,
    mixed_load_spec,
    read_mix,
)
from .spec import ScenarioSpec

_VERSIONED = re.compile(r"^(?P<name>.+)-v(?P<version>[0-9]+)$")


@dataclass(frozen=True, slots=True)
class ScenarioEntry:
    """Where a registered scenario lives."""

    id: str
    """Versioned id, e.g. `meta-sre/ad-ranking-crash-v1`."""
    folder: Path
    mix: Mix | None = None
    """For a symptom-first family: its causes and its opening (see scenarios.mix)."""
    part_of: str | None = None
    """For a cause of a symptom-first family: that family's id. A part is served when asked
    for by id, but it is not in the catalogue: its opening names its mechanism."""
    shallow_held: bool = False
    """A family that is no mix but whose opening was made not to name its remedy's target
    (`shallow_held = true`: a reworked team family): validate holds its shallow policies to the
    bar, as a mix's."""

    def instance(self, seed: int) -> ScenarioInstance:
        """Render this scenario for `seed`."""
        if self.mix is not None:
            return mixed_instance(self.mix, seed)
        return load_instance(self.folder, seed)

    def spec(self, seed: int) -> ScenarioSpec:
        """This scenario's spec for `seed`, without rendering its code tree (about 1 ms)."""
        if self.mix is not None:
            return mixed_load_spec(self.mix, seed)
        return load_spec(self.folder, seed)

    def rendered_instance(self, seed: int) -> ScenarioInstance | None:
        """`instance(seed)` if it is already rendered (about 0.1 ms), else None."""
        if self.mix is not None:
            folder, cseed = cause_of(self.mix, seed)
            return mixed_instance(self.mix, seed) if rendered_instance(folder, cseed) else None
        return rendered_instance(self.folder, seed)

    def is_test(self, seed: int) -> bool:
        """Whether `seed` is in the family's test split (its structure never occurs in training)."""
        if self.mix is not None:
            return mixed_is_test(self.mix, seed)
        return is_test_seed(self.folder, seed)


@lru_cache(maxsize=1)
def _entries() -> dict[str, ScenarioEntry]:
    found: dict[str, ScenarioEntry] = {}
    for toml in sorted(SCENARIOS_DIR.glob("*/scenario.toml")):
        if toml.parent.name.startswith("_"):
            continue
        sid = read_scenario_id(toml.parent)
        raw = read_toml(toml)
        part_of = raw.get("part_of")
        found[sid] = ScenarioEntry(
            sid,
            toml.parent,
            read_mix(toml.parent, SCENARIOS_DIR),
            str(part_of) if part_of is not None else None,
            raw.get("shallow_held") is True,
        )
    return found


@lru_cache(maxsize=1)
def _retired() -> dict[str, str]:
    """Ids no longer served, each with the family that replaced it (its `retired = [...]`)."""
    return {old: sid for sid, e in _entries().items() for old in read_retired_ids(e.folder)}


def reload() -> None:
    """Forget the list of families read from disk (see `Catalog.reload`)."""
    _entries.cache_clear()
    _retired.cache_clear()


def scenario_ids() -> list[str]:
    """Every family in the catalogue, sorted, the parts of symptom-first families included.

    A part is a family in its own right (a curriculum's easy end, a debugging aid), listed and
    served like any; its opening names its remedy, so results are reported on the family it
    is a part of (`ScenarioEntry.part_of`), whose test split holds its test seeds.
    """
    return sorted(_entries())


def part_ids() -> list[str]:
    """The causes of symptom-first families, each still a family of its own, sorted."""
    return sorted(sid for sid, e in _entries().items() if e.part_of is not None)


def resolve(scenario_id: str) -> ScenarioEntry:
    """Find a scenario by exact id, or by name without version (the newest version wins).

    `ad-ranking-crash` and `meta-sre/ad-ranking-crash` both resolve to the newest
    `meta-sre/ad-ranking-crash-vN`.

    Raises:
        UnknownScenarioError: nothing matches; the message lists the close matches.
    """
    entries = _entries()
    if scenario_id in entries:
        return entries[scenario_id]
    successor = _retired().get(scenario_id)
    if successor is not None:
        raise UnknownScenarioError(
            f"scenario {scenario_id!r} was retired: it is now the family {successor!r}, whose "
            f"seed chooses the incident's structure (where the fault lives, how it shows, what "
            f"fixes it), not only its constants; ask for {successor!r}"
        )
    wanted = scenario_id if "/" in scenario_id else None
    best: tuple[int, ScenarioEntry] | None = None
    for sid, entry in entries.items():
        m = _VERSIONED.match(sid)
        if m is None:
            continue
        name = m.group("name")
        if scenario_id in (name, name.split("/", 1)[-1]) and (wanted is None or wanted == name):
            version = int(m.group("version"))
            if best is None or version > best[0]:
                best = (version, entry)
    if best is not None:
        return best[1]
    close = difflib.get_close_matches(scenario_id, list(entries), n=3, cutoff=0.4)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise UnknownScenarioError(
        f"no scenario {scenario_id!r}{hint} Known ids: {', '.join(sorted(entries)) or 'none'}"
    )
