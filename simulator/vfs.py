"""The virtual code tree: a shared immutable base snapshot and per-episode copy-on-write edits."""

from __future__ import annotations

import difflib
import hashlib
import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, get_args

from .errors import (
    InvalidEditError,
    LineRangeError,
    ReadOnlyPathError,
)
from .history import (
    BlameLine,
    Commit,
    blame_lines,
    join_lines,
    make_commit,
    reattribute,
    split_lines,
)
from .paths import is_within, normalize_path
from .tree import BaseTree

__all__ = ["BaseTree", "EditAction", "EditRecord", "FileView", "Workspace"]

EditAction = Literal["replace", "insert", "delete"]
"""What an edit does to its line range."""

_ACTIONS: tuple[str, ...] = get_args(EditAction)

MAX_FILE_CHARS = 40_000
"""The most characters an edit may leave a file with (4x the largest file of any scenario's
tree; a file that starts larger may keep its size). Everything read from a file (a view, a
blame, an edit's context, a diff) is bounded by it, and so is what one call adds to the store."""
MAX_FILE_LINES = 2_000
"""The most lines an edit may leave a file with (a file that starts longer may keep its
length): a blame or a view says something per line."""


@dataclass(frozen=True, slots=True)
class FileView:
    """A numbered window onto one file."""

    path: str
    """The file's canonical path."""
    start_line: int
    """First line shown, 1-based."""
    end_line: int
    """Last line shown, inclusive; start_line - 1 when the file is empty."""
    total_lines: int
    """How many lines the whole file has."""
    lines: tuple[str, ...]
    """The lines shown, without their newlines."""

    def render(self) -> str:
        """Format the window for a reader: a header, then "  12 | code" per line.

        Returns:
            The header "path (lines a-b of n)" ("path (empty file)" for an empty file) followed
            by one line per file line, numbers right-aligned, no trailing newline.
        """
        if not self.total_lines:
            return f"{self.path} (empty file)"
        width = max(4, len(str(self.end_line)))
        rows = [f"{self.path} (lines {self.start_line}-{self.end_line} of {self.total_lines})"]
        for number, text in enumerate(self.lines, start=self.start_line):
            rows.append(f"{number:>{width}} | {text}" if text else f"{number:>{width}} |")
        return "\n".join(rows)


@dataclass(frozen=True, slots=True)
class EditRecord:
    """One line-range edit made during an episode."""

    seq: int
    """1-based position among the workspace's edits."""
    author: str
    """The agent that made it."""
    at_minute: float
    """Simulated minute of the episode (t >= 0) at which it was made."""
    path: str
    """The edited file's canonical path."""
    action: EditAction
    """replace, insert or delete."""
    start_line: int
    """First line replaced or deleted; for insert, the line the content went in front of."""
    end_line: int
    """Last line replaced or deleted, inclusive; for insert, equal to start_line."""
    removed: tuple[str, ...]
    """The lines the edit took out (empty for insert)."""
    inserted: tuple[str, ...]
    """The lines the edit put in (empty for delete)."""
    commit_sha: str
    """The commit that records the edit in the workspace's history."""


class Workspace:
    """One episode's view: the shared BaseTree plus an overlay of changed files (copy-on-write).

    The set of files never changes (edits change lines, never create or delete files), so the
    folder structure is the base tree's. The overlay holds only files whose content differs from
    the base; the workspace's history holds one commit per edit, authored by the editing agent.
    """

    __slots__ = ("_base", "_commits", "_edits", "_overlay")

    def __init__(self, base: BaseTree) -> None:
        self._base = base
        self._overlay: dict[str, str] = {}
        self._edits: list[EditRecord] = []
        self._commits: list[Commit] = []

    @property
    def base(self) -> BaseTree:
        """The shared snapshot this workspace overlays."""
        return self._base

    @property
    def head(self) -> str | None:
        """The sha of the newest commit, agent edits included."""
        return self._commits[-1].sha if self._commits else self._base.head

    def exists(self, path: str) -> bool:
        """Tell whether a path names a file or a folder (the root always exists).

        Raises:
            PathOutsideTreeError: The path is malformed or outside the tree.
        """
        return self._base.exists(path)

    def is_dir(self, path: str) -> bool:
        """Tell whether a path names a folder (the root is one).

        Raises:
            PathOutsideTreeError: The path is malformed or outside the tree.
        """
        return self._base.is_dir(path)

    def read(self, path: str) -> str:
        """Return a file's current content.

        Raises:
            PathOutsideTreeError: The path is malformed or outside the tree.
            FileNotFoundInTreeError: No such file; the message suggests close matches.
            PathKindError: The path is a folder.
        """
        # Canonical paths are their own normal form, so a hit skips normalisation.
        content = self._overlay.get(path)
        if content is None:
            content = self._base.files.get(path)
        if content is None:
            canonical = self._base.resolve_file(path)
            content = self._overlay.get(canonical, self._base.files[canonical])
        return content

    def view(
        self, path: str, start_line: int | None = None, end_line: int | None = None
    ) -> FileView:
        """Return numbered lines of a file, 1-based and inclusive.

        Args:
            path: The file.
            start_line: First line to show; defaults to 1.
            end_line: Last line to show; defaults to the last line, and is clamped to it.

        Raises:
            PathOutsideTreeError: The path is malformed or outside the tree.
            FileNotFoundInTreeError: No such file.
            PathKindError: The path is a folder.
            LineRangeError: start_line < 1, end_line < start_line, or start_line is past the end
                of a non-empty file; the message gives the file's line count.
        """
        canonical = self._base.resolve_file(path)
        lines = split_lines(self.read(canonical))
        start, end = _window(canonical, start_line, end_line, len(lines))
        return FileView(canonical, start, end, len(lines), tuple(lines[start - 1 : end]))

    def list_dir(self, path: str = "") -> list[str]:
        """List a folder's immediate children, sorted, folders with a trailing "/".

        Edits never add or remove files, so this is the base tree's listing.

        Raises:
            PathOutsideTreeError: The path is malformed or outside the tree.
            FileNotFoundInTreeError: No such folder.
            PathKindError: The path is a file.
        """
        return self._base.list_dir(path)

    def walk(self, prefix: str = "") -> list[str]:
        """List every file under a folder (or the file itself), as sorted canonical paths.

        Raises:
            PathOutsideTreeError: The path is malformed or outside the tree.
            FileNotFoundInTreeError: Nothing exists at prefix.
        """
        return self._base.walk(prefix)

    def find_line(self, path: str, needle: str) -> int | None:
        """Return the number of the first line of a file containing needle, None if none does.

        Raises:
            PathOutsideTreeError: The path is malformed or outside the tree.
            FileNotFoundInTreeError: No such file.
            PathKindError: The path is a folder.
        """
        return next(iter(self.lines_containing(path, needle)), None)

    def lines_containing(self, path: str, needle: str) -> tuple[int, ...]:
        """Return the numbers of the lines of a file that contain needle, in order.

        Raises:
            PathOutsideTreeError: The path is malformed or outside the tree.
            FileNotFoundInTreeError: No such file.
            PathKindError: The path is a folder.
        """
        lines = split_lines(self.read(path))
        return tuple(n for n, line in enumerate(lines, start=1) if needle in line)

    def edit(
        self,
        path: str,
        *,
        action: EditAction,
        start_line: int,
        end_line: int | None = None,
        content: str = "",
        author: str,
        at_minute: float,
        message: str | None = None,
    ) -> EditRecord:
        r"""Change a range of lines in an existing file and record it as a commit.

        - replace: lines start_line..end_line become content's lines; empty content deletes.
        - insert: content's lines go in front of start_line; start_line = line count + 1
          appends. end_line must be omitted or equal start_line.
        - delete: lines start_line..end_line are removed; content must be empty.

        end_line defaults to start_line. Content is split on newlines; a final newline in content
        is optional and adds no blank line (pass "\n" to insert one blank line). The file keeps
        the trailing-newline convention it had at the incident start (a file whose last line is
        empty always ends with a newline). Edits cannot create or delete files.

        Args:
            path: The file to edit.
            action: replace, insert or delete.
            start_line: 1-based first line of the range.
            end_line: 1-based last line of the range, inclusive.
            content: The new lines.
            author: The agent making the edit; it becomes the commit's author.
            at_minute: Simulated minute of the episode; >= 0 and not before the previous edit.
            message: Commit message; defaults to "edit <path> lines a-b".

        Returns:
            The record of the edit.

        Raises:
            PathOutsideTreeError: The path is malformed or outside the tree.
            FileNotFoundInTreeError: No such file (edits cannot create files).
            PathKindError: The path is a folder.
            ReadOnlyPathError: The path is read-only, e.g. under tests/.
            LineRangeError: The range does not fit the file; the message gives its line count.
            InvalidEditError: Unknown action, content given to delete, no content to insert,
                end_line given to insert, an empty author, or a bad at_minute.
        """
        canonical = self._base.resolve_file(path)
        locked = self._base.readonly_prefix(canonical)
        if locked is not None:
            advice = (
                "fix the code, not the tests" if locked.startswith("tests") else "edit the code"
            )
            raise ReadOnlyPathError(
                f"{locked + '/' if locked else 'the tree'} is read-only: {advice} "
                f"(refused {action} on {canonical!r})"
            )
        self._check_edit_args(action, start_line, end_line, content, author, at_minute)
        old_text = self.read(canonical)
        lines = split_lines(old_text)
        new_lines = split_lines(content)
        if action == "insert":
            _check_insert(canonical, start_line, len(lines))
            first, last = start_line, start_line - 1
        else:
            first, last = start_line, start_line if end_line is None else end_line
            _check_range(canonical, action, first, last, len(lines))
        # The convention is the file's at the incident start, so emptying a file and refilling
        # it does not lose it; a file that started empty follows POSIX.
        start_text = self._base.files[canonical]
        new_text = join_lines(
            lines[: first - 1] + new_lines + lines[last:],
            start_text.endswith("\n") or not start_text,
        )
        _check_size(canonical, new_text, start_text)
        shown_last = first + len(new_lines) - 1 if action == "insert" else last
        commit = make_commit(
            self.head,
            author,
            message if message is not None else f"edit {canonical} lines {first}-{shown_last}",
            0.0 - at_minute,  # 0.0 - 0 is 0.0, where -0 would be -0.0 and change the sha
            {canonical: new_text},
        )
        record = EditRecord(
            seq=len(self._edits) + 1,
            author=author,
            at_minute=float(at_minute),
            path=canonical,
            action=action,
            start_line=first,
            end_line=max(first, last),
            removed=tuple(lines[first - 1 : last]),
            inserted=tuple(new_lines),
            commit_sha=commit.sha,
        )
        self._edits.append(record)
        self._commits.append(commit)
        if new_text == self._base.files[canonical]:
            self._overlay.pop(canonical, None)
        else:
            self._overlay[canonical] = new_text
        return record

    def edits(self) -> tuple[EditRecord, ...]:
        """The episode's edits, oldest first."""
        return tuple(self._edits)

    def changed_files(self) -> dict[str, str]:
        """Files whose content differs from the base, path -> current content, sorted by path."""
        return dict(sorted(self._overlay.items()))

    def diff(self, path: str | None = None) -> str:
        r"""Unified diff of the current code against the incident's start.

        Args:
            path: A file, or a folder for every changed file under it; None for every changed
                file.

        Returns:
            Per changed file, sorted by path: "--- a/path" and "+++ b/path" headers and hunks with
            3 lines of context, "\ No newline at end of file" where it applies. "" when nothing
            changed.

        Raises:
            PathOutsideTreeError: The path is malformed or outside the tree.
            FileNotFoundInTreeError: Nothing exists at path.
        """
        changed = sorted(self._overlay)
        if path is not None:
            changed = [name for name in self._base.walk(path) if name in self._overlay]
        chunks: list[str] = []
        for name in changed:
            before = _keepends(self._base.files[name])
            after = _keepends(self._overlay[name])
            for line in difflib.unified_diff(before, after, f"a/{name}", f"b/{name}"):
                chunks.append(
                    line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                )
        return "".join(chunks)

    def blame(
        self, path: str, start_line: int | None = None, end_line: int | None = None
    ) -> tuple[BlameLine, ...]:
        """Attribute lines of a file to the commit that last wrote them, agent edits included.

        The base blame comes from the shared tree; each edit then re-attributes only the lines in
        its range, diffing removed against inserted lines, so lines an agent rewrote as they were
        keep their older commit.

        Args:
            path: The file.
            start_line: First line; defaults to 1.
            end_line: Last line, inclusive; defaults to and is clamped to the last line.

        Raises:
            PathOutsideTreeError: The path is malformed or outside the tree.
            FileNotFoundInTreeError: No such file.
            PathKindError: The path is a folder.
            LineRangeError: The range does not fit the file, as for view().
        """
        canonical = self._base.resolve_file(path)
        owners = list(self._base.line_owners(canonical))
        for record, commit in zip(self._edits, self._commits, strict=True):
            if record.path == canonical:
                cut = slice(record.start_line - 1, record.start_line - 1 + len(record.removed))
                owners[cut] = reattribute(record.removed, owners[cut], record.inserted, commit)
        lines = split_lines(self.read(canonical))
        start, end = _window(canonical, start_line, end_line, len(lines))
        return blame_lines(lines[start - 1 : end], owners[start - 1 : end], first_line=start)

    def log(self, path: str | None = None, limit: int = 20) -> tuple[Commit, ...]:
        """Return commits, newest first, agent edits before the base history.

        Args:
            path: Keep only commits touching this file or anything under this folder; None or
                "" for all. Files deleted in the history are accepted.
            limit: Most commits to return, >= 1.

        Raises:
            PathOutsideTreeError: The path is malformed or outside the tree.
            ValueError: limit < 1.
        """
        if limit < 1:
            raise ValueError(f"log limit must be >= 1, got {limit}")
        prefix = "" if path is None else normalize_path(path)
        history = itertools.chain(reversed(self._commits), reversed(self._base.commits))
        touching = (c for c in history if any(is_within(p, prefix) for p in c.changes))
        return tuple(itertools.islice(touching, limit))

    def snapshot(self, paths: Iterable[str] | None = None) -> dict[str, bytes]:
        """Return current contents as UTF-8 bytes, e.g. to materialise the sandbox.

        Args:
            paths: Files, or folders standing for every file under them; None for the whole
                tree.

        Returns:
            Canonical path -> content, sorted by path.

        Raises:
            PathOutsideTreeError: A path is malformed or outside the tree.
            FileNotFoundInTreeError: Nothing exists at a path.
        """
        return {path: self.read(path).encode("utf-8") for path in self._resolve(paths)}

    def content_hash(self, paths: Iterable[str]) -> str:
        """Hash the current content of some files, for caching results that depend on them.

        Args:
            paths: Files, or folders standing for every file under them. Order and repeats do
                not matter.

        Returns:
            sha256 hex over the sorted (path, content) pairs, each length-prefixed so no two
            different sets of files give the same input.

        Raises:
            PathOutsideTreeError: A path is malformed or outside the tree.
            FileNotFoundInTreeError: Nothing exists at a path.
        """
        digest = hashlib.sha256()
        for path, data in self.snapshot(paths).items():
            name = path.encode("utf-8")
            digest.update(b"%d:%s%d:%s" % (len(name), name, len(data), data))
        return digest.hexdigest()

    def reset(self) -> None:
        """Drop every edit, returning to the base snapshot; costs O(1), copies nothing."""
        self._overlay = {}
        self._edits = []
        self._commits = []

    def _resolve(self, paths: Iterable[str] | None) -> list[str]:
        if paths is None:
            return list(self._base.files)
        return sorted({name for path in paths for name in self._base.walk(path)})

    def _check_edit_args(
        self,
        action: str,
        start_line: int,
        end_line: int | None,
        content: str,
        author: str,
        at_minute: float,
    ) -> None:
        if not author:
            raise InvalidEditError("author must be the editing agent's id, not empty")
        if action not in _ACTIONS:
            raise InvalidEditError(f"unknown edit action {action!r}; use one of {list(_ACTIONS)}")
        if action == "delete" and content:
            raise InvalidEditError(
                "delete takes no content; use replace to put new lines in place of old ones"
            )
        if action == "insert" and not content:
            raise InvalidEditError('insert needs content; pass "\\n" to insert one blank line')
        if action == "insert" and end_line is not None and end_line != start_line:
            raise InvalidEditError(
                f"insert puts content in front of start_line and takes no end_line (got "
                f"end_line={end_line}); use replace to change a range"
            )
        if not math.isfinite(at_minute) or at_minute < 0:
            raise InvalidEditError(f"at_minute must be a finite number >= 0, got {at_minute!r}")
        if self._edits and at_minute < self._edits[-1].at_minute:
            raise InvalidEditError(
                f"at_minute {at_minute} is before the previous edit's {self._edits[-1].at_minute}; "
                "the simulated clock never goes back"
            )


def _check_size(path: str, new_text: str, start_text: str) -> None:
    """Refuse an edit that would leave a file larger than a file may be."""
    chars, lines = len(new_text), new_text.count("\n") + 1
    most_chars = max(MAX_FILE_CHARS, len(start_text))
    most_lines = max(MAX_FILE_LINES, start_text.count("\n") + 1)
    if chars > most_chars or lines > most_lines:
        raise InvalidEditError(
            f"the edit would leave {path} with {chars} characters in {lines} lines; a file may "
            f"hold at most {most_chars} characters and {most_lines} lines: replace lines "
            "rather than add them"
        )


def _keepends(text: str) -> list[str]:
    r"""Split like split_lines() but keep each "\n", as difflib.unified_diff expects."""
    lines = text.split("\n")
    tail = lines.pop()
    kept = [line + "\n" for line in lines]
    if tail:
        kept.append(tail)
    return kept


def _count(lines: int) -> str:
    return "1 line" if lines == 1 else f"{lines} lines"


def _window(path: str, start: int | None, end: int | None, total: int) -> tuple[int, int]:
    """Resolve a lenient (view/blame) line range; end is clamped to the file."""
    first = 1 if start is None else start
    # An empty file has no line 1, but viewing it from line 1 is how one sees that it is empty.
    fits = 1 <= first <= max(total, 1) and (end is None or end >= first)
    if not fits:
        asked = f"start_line={first}" + ("" if end is None else f", end_line={end}")
        raise LineRangeError(
            f"{path!r} has {_count(total)}; need 1 <= start_line <= {max(total, 1)} and "
            f"start_line <= end_line (end_line is clamped to the last line), got {asked}"
        )
    return first, total if end is None else min(end, total)


def _check_insert(path: str, start: int, total: int) -> None:
    if not 1 <= start <= total + 1:
        raise LineRangeError(
            f"{path!r} has {_count(total)}; insert needs 1 <= start_line <= {total + 1} "
            f"(the content goes in front of start_line; {total + 1} appends), got {start}"
        )


def _check_range(path: str, action: str, start: int, end: int, total: int) -> None:
    if not total:
        raise LineRangeError(
            f"{path!r} is empty (0 lines), so there is nothing to {action}; use insert at line 1"
        )
    if not 1 <= start <= end <= total:
        raise LineRangeError(
            f"{path!r} has {_count(total)}; {action} needs 1 <= start_line <= end_line <= {total}, "
            f"got start_line={start}, end_line={end}; view the file to check the line numbers"
        )
