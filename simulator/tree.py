"""The base snapshot of a scenario's code tree, shared read-only by every episode."""

from __future__ import annotations

import bisect
import difflib
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from .errors import (
    FileNotFoundInTreeError,
    HistoryError,
    PathKindError,
)
from .history import (
    BlameLine,
    Commit,
    blame_lines,
    blame_owners,
    replay,
    split_lines,
)
from .paths import is_within, normalize_path

__all__ = ["BaseTree"]


class BaseTree:
    """Immutable snapshot from a list of commits, shared by every episode of a (scenario, seed).

    Build one with from_commits(). Nothing changes after construction except the blame cache,
    which only gains entries computed from the immutable history.
    """

    __slots__ = ("_blame", "_children", "_commits", "_files", "_readonly", "_sorted_files")

    def __init__(self, commits: Sequence[Commit], readonly_prefixes: Sequence[str]) -> None:
        self._commits = tuple(commits)
        self._readonly = tuple(normalize_path(prefix) for prefix in readonly_prefixes)
        files = replay(self._commits)
        self._files: Mapping[str, str] = MappingProxyType(files)
        self._sorted_files = tuple(files)
        self._children = _index_dirs(self._sorted_files)
        self._blame: dict[str, tuple[tuple[Commit, ...], tuple[BlameLine, ...]]] = {}

    @classmethod
    def from_commits(
        cls, commits: Sequence[Commit], *, readonly_prefixes: Sequence[str] = ("tests/",)
    ) -> BaseTree:
        """Replay commits, oldest first, into a snapshot.

        Args:
            commits: The history, each commit's parent being the previous one's sha (as
                make_commit and load_history_dir build them).
            readonly_prefixes: Folders (or files) agents may not edit.

        Returns:
            The snapshot.

        Raises:
            HistoryError: A sha does not match its commit, the parent chain is broken, a commit
                deletes a missing file, or a path is both a file and a folder.
        """
        return cls(commits, readonly_prefixes)

    @property
    def files(self) -> Mapping[str, str]:
        """Canonical path -> content, sorted by path; a read-only view."""
        return self._files

    @property
    def commits(self) -> tuple[Commit, ...]:
        """The history, oldest first."""
        return self._commits

    @property
    def head(self) -> str | None:
        """The sha of the newest commit, None for an empty history."""
        return self._commits[-1].sha if self._commits else None

    @property
    def readonly_prefixes(self) -> tuple[str, ...]:
        """The canonical read-only paths ("" would make everything read-only)."""
        return self._readonly

    def is_readonly(self, path: str) -> bool:
        """Tell whether agents may not edit a path (PathOutsideTreeError if malformed)."""
        return self.readonly_prefix(path) is not None

    def readonly_prefix(self, path: str) -> str | None:
        """Return the read-only prefix covering a path, None if it is editable.

        Raises:
            PathOutsideTreeError: The path is malformed or outside the tree.
        """
        canonical = normalize_path(path)
        return next((p for p in self._readonly if is_within(canonical, p)), None)

    def exists(self, path: str) -> bool:
        """Tell whether a path names a file or a folder (PathOutsideTreeError if malformed)."""
        canonical = normalize_path(path)
        return canonical in self._files or canonical in self._children

    def is_dir(self, path: str) -> bool:
        """Tell whether a path names a folder (PathOutsideTreeError if malformed)."""
        return normalize_path(path) in self._children

    def resolve_file(self, path: str) -> str:
        """Return the canonical path of an existing file.

        Raises:
            PathOutsideTreeError: The path is malformed or outside the tree.
            FileNotFoundInTreeError: No such file; the message suggests close matches.
            PathKindError: The path is a folder.
        """
        canonical = normalize_path(path)
        if canonical in self._files:
            return canonical
        if canonical in self._children:
            raise PathKindError(
                f"{canonical or '/'!r} is a folder, not a file; list it with list_files or name a "
                "file in it"
            )
        raise self._missing(canonical, "file")

    def list_dir(self, path: str = "") -> list[str]:
        """List a folder's immediate children, sorted, folders with a trailing "/".

        Raises:
            PathOutsideTreeError: The path is malformed or outside the tree.
            FileNotFoundInTreeError: No such folder.
            PathKindError: The path is a file.
        """
        canonical = normalize_path(path)
        children = self._children.get(canonical)
        if children is None:
            if canonical in self._files:
                raise PathKindError(f"{canonical!r} is a file, not a folder; read it with view")
            raise self._missing(canonical, "folder")
        return list(children)

    def walk(self, prefix: str = "") -> list[str]:
        """List every file under a folder (or the file itself), as sorted canonical paths.

        Raises:
            PathOutsideTreeError: The path is malformed or outside the tree.
            FileNotFoundInTreeError: Nothing exists at prefix.
        """
        canonical = normalize_path(prefix)
        files = self._sorted_files
        if canonical in self._files:
            return [canonical]
        if not canonical:
            return list(files)
        if canonical not in self._children:
            raise self._missing(canonical, "file or folder")
        # A folder's files are one slice of the sorted paths: those starting with "dir/" sort
        # before "dir0", "0" being the character after "/".
        low = bisect.bisect_left(files, canonical + "/")
        return list(files[low : bisect.bisect_left(files, canonical + "0")])

    def blame(self, path: str) -> tuple[BlameLine, ...]:
        """Attribute every line of a file to the base commit that last wrote it.

        Computed on first use and cached on the tree, so every episode shares it.

        Raises:
            PathOutsideTreeError: The path is malformed or outside the tree.
            FileNotFoundInTreeError: No such file.
            PathKindError: The path is a folder.
        """
        return self._blame_entry(self.resolve_file(path))[1]

    def line_owners(self, path: str) -> tuple[Commit, ...]:
        """Return the base commit owning each line of a file: blame() without the rendering.

        Raises:
            PathOutsideTreeError: The path is malformed or outside the tree.
            FileNotFoundInTreeError: No such file.
            PathKindError: The path is a folder.
        """
        return self._blame_entry(self.resolve_file(path))[0]

    def _blame_entry(self, path: str) -> tuple[tuple[Commit, ...], tuple[BlameLine, ...]]:
        entry = self._blame.get(path)
        if entry is None:
            owners = tuple(blame_owners(self._commits, path))
            entry = (owners, blame_lines(split_lines(self._files[path]), owners))
            self._blame[path] = entry
        return entry

    def _missing(self, path: str, kind: str) -> FileNotFoundInTreeError:
        suggestions = self._suggest(path)
        hint = (
            f"did you mean {', '.join(repr(name) for name in suggestions)}?"
            if suggestions
            else "list the tree with list_files (path '') to see what exists"
        )
        return FileNotFoundInTreeError(f"no {kind} {path!r} in the code tree; {hint}")

    def _suggest(self, path: str) -> list[str]:
        """Return paths an agent probably meant, best first.

        First the path with each segment's typo corrected, then files of the same name anywhere.
        Matching segment by segment against one folder's children at a time, rather than the
        whole path against every file, keeps a wrong path cheap in trees of any size.
        """
        found: list[str] = []
        current = ""
        for segment in path.split("/"):
            children = self._children.get(current)
            if children is None:
                break
            names = [child.rstrip("/") for child in children]
            close = [segment] if segment in names else difflib.get_close_matches(segment, names, 1)
            if not close:
                break
            current = f"{current}/{close[0]}" if current else close[0]
        else:
            if current and current != path:
                found.append(current)
        name = path.rsplit("/", 1)[-1]
        found += [f for f in self._sorted_files if f.rsplit("/", 1)[-1] == name and f != path]
        return list(dict.fromkeys(found))[:5]


def _index_dirs(files: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Map each folder to its sorted children, folders with a trailing "/"."""
    children: dict[str, set[str]] = {"": set()}
    file_set = set(files)
    for path in files:
        parts = path.split("/")
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            if folder in file_set:
                raise HistoryError(f"{folder!r} is both a file and the folder of {path!r}")
            children.setdefault("/".join(parts[: depth - 1]), set()).add(parts[depth - 1] + "/")
        children.setdefault("/".join(parts[:-1]), set()).add(parts[-1])
    return {folder: tuple(sorted(names)) for folder, names in children.items()}
