"""Per-seed rendering of scenario data.

Draw the variants and variables, fill `{{name}}` templates, drop the tables whose `when` is
false.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import Any

_TEMPLATE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}")


def draw_values(scenario_id: str, seed: int, variables: Mapping[str, Any]) -> dict[str, Any]:
    """Choose one value per variable for `seed`, reproducibly.

    Names are drawn in sorted order from `random.Random(f"{scenario_id}:{seed}")`, so adding a
    variable later only changes the draws of names that sort after it.
    """
    rng = random.Random(f"{scenario_id}:{seed}")
    values: dict[str, Any] = {}
    for name in sorted(variables):
        choices = variables[name]
        if not isinstance(choices, list | tuple) or not choices:
            raise ValueError(f"variable {name!r} must be a non-empty list of choices")
        values[name] = rng.choice(list(choices))
    return values


def draw_variants(scenario_id: str, seed: int, variants: Mapping[str, Any]) -> dict[str, Any]:
    """Choose one table per structural axis for `seed`, in stratified cycles.

    An axis with n choices walks a fresh permutation of them every n seeds (cycle k covers
    seeds k*n .. k*n+n-1, shuffled by `random.Random(f"{id}:{axis}:{k}")`). So seeds 0..n-1
    meet every choice once, every structure is reachable from few seeds, and the choice of
    any one seed comes back exactly once per cycle: a memorised seed's structure recurs in
    1/n of the seeds, not by the luck of independent draws.
    """
    values: dict[str, Any] = {}
    for axis in sorted(variants):
        choices = variants[axis]
        if not isinstance(choices, list | tuple) or not choices:
            raise ValueError(f"variant axis {axis!r} must be a non-empty list of tables")
        cycle, position = divmod(seed, len(choices))
        order = list(range(len(choices)))
        random.Random(f"{scenario_id}:{axis}:{cycle}").shuffle(order)
        values[axis] = choices[order[position]]
    return values


FALSE_WORDS = frozenset({"", "0", "false", "no", "off", "none"})
"""What a rendered `when` may say to drop its table (case-insensitive)."""


def truthy(value: Any) -> bool:
    """Whether a rendered `when` keeps its table: a bool, or a word not in FALSE_WORDS."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value != 0
    if isinstance(value, list | tuple | dict):
        return bool(value)
    return str(value).strip().lower() not in FALSE_WORDS


def drop_unwanted(value: Any) -> Any:
    """Remove, from every list, the tables whose `when` is false; strip `when` from the rest.

    A family declares the parts that exist for some structures only (a red herring's logs, an
    extra service, a second deployment) as tables with `when = "{{axis.flag}}"`.
    """
    if isinstance(value, list):
        kept = []
        for item in value:
            if isinstance(item, dict) and "when" in item:
                if not truthy(item["when"]):
                    continue
                item = {k: v for k, v in item.items() if k != "when"}
            kept.append(drop_unwanted(item))
        return kept
    if isinstance(value, dict):
        return {k: drop_unwanted(v) for k, v in value.items()}
    return value


def _lookup(values: Mapping[str, Any], dotted: str) -> Any:
    current: Any = values
    for part in dotted.split("."):
        if not isinstance(current, Mapping) or part not in current:
            raise KeyError(dotted)
        current = current[part]
    return current


class Renderer:
    """Fills `{{name}}` and `{{name.field}}` templates with one seed's values."""

    __slots__ = ("values",)

    def __init__(self, values: Mapping[str, Any]) -> None:
        self.values = dict(values)

    def text(self, source: str) -> str:
        """Render every template in `source`; an unknown name is an error, not a blank."""
        if "{{" not in source:
            return source

        def fill(match: re.Match[str]) -> str:
            try:
                return str(_lookup(self.values, match.group(1)))
            except KeyError:
                raise ValueError(
                    f"template {match.group(0)} names no variable; known: {sorted(self.values)}"
                ) from None

        return _TEMPLATE.sub(fill, source)

    def data(self, value: Any) -> Any:
        """Render a parsed TOML value; a string that is exactly one template takes its type."""
        if isinstance(value, str):
            # Only a bare template takes its value's type; surrounding text (even indentation)
            # makes it a string.
            whole = _TEMPLATE.fullmatch(value)
            if whole:
                try:
                    return _lookup(self.values, whole.group(1))
                except KeyError:
                    return self.text(value)  # raises with the helpful message
            return self.text(value)
        if isinstance(value, list):
            return [self.data(v) for v in value]
        if isinstance(value, dict):
            return {k: self.data(v) for k, v in value.items()}
        return value
