"""Where a report's episodes come from: trajectory stores (SQLite) and exported JSONL files.

Both give episodes in the export's chat form (`metasre.service.store.export`), so a report of a
store and a report of its export are the same report. An input is `PATH` or `LABEL=PATH`; the
label names the run in the report (default: the file's name without its suffix).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from metasre.cli.errors import StoreUnusableError, UsageError

SQLITE_MAGIC = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite database file."""
REQUIRED_KEYS = ("session_id", "episode", "scenario_id", "seed", "agents", "grade", "steps")
"""What a line of an exported file must hold for the report to read it."""


@dataclass(frozen=True, slots=True)
class Run:
    """One input: its label, where it was read from, and its finished episodes."""

    label: str
    path: Path
    kind: str
    """`store` (SQLite) or `jsonl` (an export)."""
    episodes: Sequence[Mapping[str, Any]]


def parse_input(text: str) -> tuple[str, Path]:
    """(label, path) of `PATH` or `LABEL=PATH`."""
    label, eq, rest = text.partition("=")
    if eq and label and "/" not in label and rest:
        return label, Path(rest)
    path = Path(text)
    return path.stem or path.name, path


def read_runs(inputs: Sequence[str]) -> list[Run]:
    """Every input read, in order; labels made unique (a second `a` becomes `a#2`).

    Raises:
        UsageError: a file is missing, is neither a store nor an export, or has no episode.
        StoreUnusableError: a store cannot be opened.
    """
    runs: list[Run] = []
    seen: dict[str, int] = {}
    for text in inputs:
        label, path = parse_input(text)
        seen[label] = seen.get(label, 0) + 1
        if seen[label] > 1:
            label = f"{label}#{seen[label]}"
        runs.append(read_run(label, path))
    return runs


def read_run(label: str, path: Path) -> Run:
    """One input: a trajectory store or an exported JSONL file, told apart by their bytes."""
    if not path.is_file():
        raise UsageError(
            f"no file {path}: give a trajectory store (metasre serve, rollout and demo write "
            "./metasre.db) or a file made by `metasre export`"
        )
    with path.open("rb") as f:
        head = f.read(len(SQLITE_MAGIC))
    if head == SQLITE_MAGIC:
        return Run(label, path, "store", _from_store(path))
    return Run(label, path, "jsonl", _from_jsonl(path))


def _from_store(path: Path) -> list[Mapping[str, Any]]:
    from metasre.service import StoreError, TrajectoryStore, episodes

    try:
        store = TrajectoryStore(path)
    except StoreError as exc:
        raise StoreUnusableError(f"cannot read the trajectory store {path}: {exc}") from None
    try:
        return list(episodes(store))
    finally:
        store.close()


def _from_jsonl(path: Path) -> list[Mapping[str, Any]]:
    out: list[Mapping[str, Any]] = []
    with path.open("rb") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError as exc:
                raise UsageError(
                    f"{path} line {number} is not JSON ({exc}); give a trajectory store or a "
                    "file made by `metasre export`"
                ) from None
            missing = (
                [k for k in REQUIRED_KEYS if k not in record]
                if isinstance(record, dict)
                else list(REQUIRED_KEYS)
            )
            if missing:
                raise UsageError(
                    f"{path} line {number} is not an exported episode (no "
                    f"{', '.join(missing)}); make one with `metasre export --store FILE --out "
                    f"{path.name}`"
                )
            if record.get("finished", record.get("grade") is not None):
                out.append(record)
    return out
