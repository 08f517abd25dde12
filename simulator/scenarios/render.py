"""Per-seed rendering of scenario data: draw the variables, fill `{{name}}` templates."""

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
