"""The one replay of recorded calls: recovery, counterfactual credit and validation all use it.

Exact replay (the default) applies each call as it was made: after a crash, the same calls on
the same scenario and seed rebuild the same world, and `check` may compare each step with
what was recorded. Replay *by content* is for the counterfactual of DIFFERENCE attribution,
where some agent's calls are left out: an edit then goes where its context still is, the way a
patch applies, rather than at its raw line number, which other agents' edits may have moved.
An edit whose context is gone no longer applies; it is skipped and reported, not forced.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from metasre.simulator.episode import Episode, StepResult
from metasre.simulator.errors import EpisodeOverError
from metasre.simulator.history import split_lines
from metasre.simulator.tools import TOOLS

__all__ = ["Patch", "RecordedCall", "patch_of", "replay"]


@dataclass(frozen=True, slots=True)
class Patch:
    """An edit as content: what it replaced, between which unchanged lines."""

    path: str
    above: tuple[str, ...]
    """Up to a few unchanged lines just above the edit (tools.files.CONTEXT_LINES)."""
    removed: tuple[str, ...]
    """The lines it replaced or deleted (none for an insert)."""
    below: tuple[str, ...]
    """As many unchanged lines just below it."""


@dataclass(frozen=True, slots=True)
class RecordedCall:
    """An applied call as a replay needs it."""

    agent_id: str
    tool: str
    args: Mapping[str, Any]
    round: int = 0
    """The SIMULTANEOUS round (0 otherwise): calls of one round replay as one round."""
    patch: Patch | None = None
    """For an edit: where it went, by content (see `patch_of`)."""


def patch_of(tool: str, data: Mapping[str, Any]) -> Patch | None:
    """The patch of an applied code change, from its result's data (None for any other call)."""
    found = TOOLS.get(tool)
    if found is None or not found.changes_code or "context_above" not in data:
        return None
    return Patch(
        str(data["path"]),
        tuple(str(x) for x in data["context_above"]),
        tuple(str(x) for x in data["removed"]),
        tuple(str(x) for x in data["context_below"]),
    )


def _relocated(episode: Episode, call: RecordedCall) -> RecordedCall | None:
    """The edit with its line numbers found by content in the episode's file, or None."""
    patch = call.patch
    assert patch is not None
    try:
        lines = split_lines(episode.workspace.read(patch.path))
    except Exception:  # the file is gone: the edit has nowhere to go
        return None
    start = _locate(lines, patch)
    if start is None:
        return None
    args = dict(call.args)
    args.pop("find", None)  # the place is found by the patch's content instead
    args["start_line"] = start
    if args.get("action") == "insert":
        args.pop("end_line", None)
    else:
        args["end_line"] = start + len(patch.removed) - 1
    return replace(call, args=args)


def _locate(lines: Sequence[str], patch: Patch) -> int | None:
    """The 1-based line the patch's removed lines start at (or an insert goes), or None.

    Like a patch with fuzz: the whole context first, then less of it, nearest lines last to
    go, so lines another agent put right beside the edit do not lose it its place; then, with
    at least two lines of context kept, the place alone (the same number of lines between
    the context), for lines another agent changed in place. Only a unique match counts: a
    patch applies where it is sure or not at all.
    """
    above, removed, below = list(patch.above), list(patch.removed), list(patch.below)
    n = len(removed)
    kept = sorted(
        ((a, b) for a in range(len(above) + 1) for b in range(len(below) + 1)),
        key=lambda ab: -(ab[0] + ab[1]),
    )
    for exact in (True, False):
        for a, b in kept:
            if not exact and a + b < 2:
                continue
            if exact and a + b + n == 0:
                continue
            top, bottom = above[len(above) - a :], below[:b]
            starts = [
                i
                for i in range(len(lines) - a - n - b + 1)
                if lines[i : i + a] == top
                and lines[i + a + n : i + a + n + b] == bottom
                and (not exact or lines[i + a : i + a + n] == removed)
            ]
            if len(starts) == 1:
                return starts[0] + a + 1
    return None


def replay(
    episode: Episode,
    calls: Sequence[RecordedCall],
    *,
    by_content: bool = False,
    check: Callable[[RecordedCall, StepResult], None] | None = None,
) -> list[RecordedCall]:
    """Apply `calls` to `episode` in order, SIMULTANEOUS rounds as rounds.

    Args:
        episode: Where to apply them (fresh, usually).
        calls: The calls, in the order they were applied.
        by_content: Place edits by their patch rather than their raw line numbers.
        check: Called with each call and its step (recovery raises there on a mismatch);
            exceptions from it, or from a call the world refuses, propagate.

    Returns:
        The edits that no longer applied (by content only). Replay stops quietly at the end
        of the episode.
    """
    skipped: list[RecordedCall] = []
    current_round = 0
    try:
        for call in calls:
            if call.round != current_round:
                if current_round:
                    episode.end_round()
                if call.round:
                    episode.begin_round()
                current_round = call.round
            applied = call
            if by_content and call.patch is not None:
                moved = _relocated(episode, call)
                if moved is None:
                    skipped.append(call)
                    continue
                applied = moved
            step = episode.apply(applied.agent_id, applied.tool, applied.args)
            if check is not None:
                check(call, step)
    except EpisodeOverError:
        pass
    finally:
        if current_round:
            episode.end_round()
    return skipped
