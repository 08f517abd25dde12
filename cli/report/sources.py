"""Where a report's data come from: stores, exports and `metasre validate --json` verdicts.

Stores and exports give episodes in the export's chat form (`metasre.service.store.export`), so
a report of a store and a report of its export are the same report. A validation (a JSON list,
one object per family) gives the grades of the reference solution, the expert, the random agent,
the wrong fix and the reward-hacking probes, for the validity panel. An input is `PATH` or
`LABEL=PATH`; the label names the run in the report (default: the file's name, no suffix).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..errors import StoreUnusableError, UsageError

SQLITE_MAGIC = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite database file."""
REQUIRED_KEYS = ("session_id", "episode", "scenario_id", "seed", "agents", "grade", "steps")
"""What a line of an exported file must hold for the report to read it."""
VALIDATION_KEYS = ("scenario_id", "ok", "reference_min", "expert_min", "random_mean")
"""What each family's verdict of `metasre validate --json` holds that the report shows."""


@dataclass(frozen=True, slots=True)
class Run:
    """One input: its label, where it was read from, and its finished episodes."""

    label: str
    path: Path
    kind: str
    """`store` (SQLite), `jsonl` (an export) or `validate` (`metasre validate --json`)."""
    episodes: Sequence[Mapping[str, Any]]
    validation: Sequence[Mapping[str, Any]] = ()
    """Per family, the verdict of `metasre validate --json` (a `validate` input only)."""


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
    if head.lstrip()[:1] == b"[":  # JSONL lines are objects; validate --json is one list
        return Run(label, path, "validate", (), _from_validation(path))
    return Run(label, path, "jsonl", _from_jsonl(path))


def _from_store(path: Path) -> list[Mapping[str, Any]]:
    from ...service import StoreError, TrajectoryStore, episodes

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


def _from_validation(path: Path) -> list[Mapping[str, Any]]:
    try:
        verdicts = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise UsageError(
            f"{path} starts like a JSON list but is not JSON ({exc}); give a trajectory store, "
            "an export, or the output of `metasre validate --json`"
        ) from None
    for i, verdict in enumerate(verdicts):
        missing = (
            [k for k in VALIDATION_KEYS if k not in verdict]
            if isinstance(verdict, dict)
            else list(VALIDATION_KEYS)
        )
        if missing:
            raise UsageError(
                f"{path} item {i} is not a family's verdict of `metasre validate --json` (no "
                f"{', '.join(missing)}; make one with `metasre validate --json > {path.name}`), "
                "nor an export (one episode object a line)"
            )
    return list(verdicts)
