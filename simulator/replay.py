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

from .episode import Episode, StepResult
from .errors import EpisodeOverError
from .history import split_lines
from .tools.base import Patch

__all__ = ["Patch", "RecordedCall", "replay"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedCall:
    """An applied call as a replay needs it."""

    agent_id: str
    tool: str
    args: Mapping[str, Any]
    round: int = 0
    """The SIMULTANEOUS round (0 otherwise): calls of one round replay as one round."""
    patch: Patch | None = None
    """For an edit: where it went, by content (its output's `patch` effect)."""
    costly: bool = False
    """It cost the grade (an operation the incident did not need, a hint): a cost of its
    seat's own, which no counterfactual of another seat's credit carries (see
    `metasre.service.core.attribution`)."""


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


def _locate(lines: Sequence[str], patch: Patch, *, fuzzy: bool = True) -> int | None:
    """The 1-based line the patch's removed lines start at (or an insert goes), or None.

    Like a patch with fuzz: the whole context first, then less of it, nearest lines last to
    go, so lines another agent put right beside the edit do not lose it its place; then, with
    at least two lines of context kept, the place alone (the same number of lines between
    the context), for lines another agent changed in place (not when `fuzzy` is False: the
    removed lines must be there as they were). Only a unique match counts: a patch applies
    where it is sure or not at all.
    """
    above, removed, below = list(patch.above), list(patch.removed), list(patch.below)
    n = len(removed)
    kept = sorted(
        ((a, b) for a in range(len(above) + 1) for b in range(len(below) + 1)),
        key=lambda ab: -(ab[0] + ab[1]),
    )
    for exact in (True, False) if fuzzy else (True,):
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


class _Without:
    """Places the edits of a replay without one agent: DIFFERENCE's counterfactual.

    It follows the files as the episode played left them, edit by edit (every seat's), and
    the changes the removed agent made to each. Another seat's edit then leaves its file as
    that edit left it in the episode played, less the removed agent's changes, each reverted
    by content, newest first. When one of them cannot be reverted for sure (a teammate has
    rewritten its lines since, or its place is ambiguous), none of the removed agent's
    changes to that file are: the teammate built on them, and what cannot be told apart goes
    to the teammate, never to the agent removed. So an agent's edits that change no behaviour
    (comments, whitespace, renames, reorderings, rewrites of a fix's context) leave the
    teammates' code behaving as it did, and earn nothing; an edit that did the work (a fix
    no teammate has rewritten) is reverted, and keeps its credit.
    """

    def __init__(self, episode: Episode, agent: str) -> None:
        self.episode = episode
        self.agent = agent
        self.played: dict[str, list[str]] = {}
        """The files as the episode played left them, those edited so far."""
        self.theirs: dict[str, list[Patch]] = {}
        """The removed agent's patches per file, oldest first."""

    def see(self, call: RecordedCall) -> None:
        """Follow the played episode through `call` (any seat's)."""
        patch = call.patch
        if patch is None or not patch.start:
            return
        lines = self.played.get(patch.path)
        if lines is None:
            lines = split_lines(self.episode.workspace.base.files.get(patch.path, ""))
        at = patch.start - 1
        self.played[patch.path] = [*lines[:at], *patch.inserted, *lines[at + len(patch.removed) :]]
        if call.agent_id == self.agent:
            self.theirs.setdefault(patch.path, []).append(patch)

    def target(self, path: str) -> list[str]:
        """The file as the played episode has it now, less the removed agent's changes."""
        played = self.played[path]
        out = list(played)
        for patch in reversed(self.theirs.get(path, [])):
            undo = Patch(path=path, above=patch.above, removed=patch.inserted, below=patch.below)
            at = _locate(out, undo, fuzzy=False)
            if at is None:
                return list(played)  # built upon: the teammate's, as it was
            out[at - 1 : at - 1 + len(patch.inserted)] = patch.removed
        return out

    def place(self, episode: Episode, call: RecordedCall) -> RecordedCall | None:
        """`call`, a teammate's edit, as the one edit that leaves its file as `target` says."""
        patch = call.patch
        assert patch is not None
        if not patch.start or patch.path not in self.played:
            return _relocated(episode, call)
        try:
            now = split_lines(episode.workspace.read(patch.path))
        except Exception:  # the file is gone: the edit has nowhere to go
            return None
        args = _rewrite(patch.path, now, self.target(patch.path))
        if args is None:  # more than one edit may carry: placed by content instead
            return _relocated(episode, call)
        return replace(call, args=args)


MAX_CONTENT = 20_000
"""The most characters one edit_lines may carry (its schema's content limit)."""


def _rewrite(path: str, now: Sequence[str], want: Sequence[str]) -> dict[str, Any] | None:
    """The arguments of one edit_lines that turns `now` into `want`, or None if none can."""
    head = 0
    while head < min(len(now), len(want)) and now[head] == want[head]:
        head += 1
    tail = 0
    while tail < min(len(now), len(want)) - head and now[-1 - tail] == want[-1 - tail]:
        tail += 1
    old, new = now[head : len(now) - tail], want[head : len(want) - tail]
    content = "".join(f"{line}\n" for line in new)
    if len(content) > MAX_CONTENT:
        return None
    if not old and not new:
        if not now:
            return None
        # Nothing to change: still a call, as the edit was (its step and its minutes).
        return {"path": path, "action": "replace", "start_line": 1, "end_line": 1,
                "content": f"{now[0]}\n"}  # fmt: skip
    if not old:
        return {"path": path, "action": "insert", "start_line": head + 1, "content": content}
    end = head + len(old)
    if not new:
        return {"path": path, "action": "delete", "start_line": head + 1, "end_line": end}
    return {"path": path, "action": "replace", "start_line": head + 1, "end_line": end,
            "content": content}  # fmt: skip


def replay(
    episode: Episode,
    calls: Sequence[RecordedCall],
    *,
    by_content: bool = False,
    without: str | None = None,
    check: Callable[[RecordedCall, StepResult], None] | None = None,
) -> list[RecordedCall]:
    """Apply `calls` to `episode` in order, SIMULTANEOUS rounds as rounds.

    Args:
        episode: Where to apply them (fresh, usually).
        calls: The calls, in the order they were applied.
        by_content: Place edits by their patch rather than their raw line numbers.
        without: Leave out this agent's calls, and place the others' edits as `_Without`
            says: the counterfactual of DIFFERENCE attribution.
        check: Called with each call and its step (recovery raises there on a mismatch);
            exceptions from it, or from a call the world refuses, propagate.

    Returns:
        The edits that no longer applied (by content only). Replay stops quietly at the end
        of the episode.
    """
    skipped: list[RecordedCall] = []
    tracker = _Without(episode, without) if without is not None else None
    place = tracker.place if tracker is not None else _relocated if by_content else None
    current_round = 0
    try:
        for call in calls:
            if tracker is not None:
                tracker.see(call)
                if call.agent_id == without:
                    continue
            if call.round != current_round:
                if current_round:
                    episode.end_round()
                if call.round:
                    episode.begin_round()
                current_round = call.round
            applied = call
            if place is not None and call.patch is not None:
                moved = place(episode, call)
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
