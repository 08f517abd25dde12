"""Commits of the code tree: content-addressed values, line-level blame, and the history loader."""

from __future__ import annotations

import difflib
import hashlib
import itertools
import json
import math
import os
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from .errors import HistoryError, PathOutsideTreeError
from .lru import Lru
from .paths import normalize_path
from .scenarios.render import truthy

__all__ = [
    "BlameLine",
    "Commit",
    "blame_lines",
    "blame_owners",
    "commit_sha",
    "join_lines",
    "load_history_dir",
    "make_commit",
    "reattribute",
    "replay",
    "split_lines",
]

_SHA = re.compile(r"^[0-9a-f]{12}$")
_COMMIT_FOLDER = re.compile(r"^(\d+)-\S+$")
_META_FILE = "commit.toml"
_REQUIRED_META = ("author", "message", "minutes_ago")
_OPTIONAL_META = ("deleted", "patch", "when")


@dataclass(frozen=True, slots=True)
class Commit:
    """One commit of the code tree; agent edits become commits too."""

    sha: str
    """12 hex characters, a digest of everything below and the parent's sha (see make_commit)."""
    author: str
    """Who wrote it: a person such as "dana@ads-team", or an agent id."""
    message: str
    """The full commit message."""
    minutes_ago: float
    """Minutes before the incident start (t=0); an agent edit at minute t has minutes_ago = -t."""
    changes: Mapping[str, str | None] = field(hash=False, repr=False)
    """Canonical path -> full new content, or None when the commit deletes the file."""
    parent: str | None = None
    """The sha of the previous commit, None for the first one."""

    def __post_init__(self) -> None:
        if not _SHA.match(self.sha):
            raise HistoryError(
                f"commit sha {self.sha!r} is not 12 lowercase hex characters; "
                "build commits with make_commit() so the sha is computed for you"
            )
        # Freeze a sorted copy: a commit is a value, the caller's dict must not alias it.
        frozen = MappingProxyType(dict(sorted(self.changes.items())))
        object.__setattr__(self, "changes", frozen)

    @property
    def subject(self) -> str:
        """The first line of the message."""
        return self.message.split("\n", 1)[0]


@dataclass(frozen=True, slots=True)
class BlameLine:
    """Which commit last wrote one line of a file."""

    line: int
    """1-based line number in the file as it is now."""
    sha: str
    """The commit that wrote the line."""
    author: str
    """That commit's author."""
    minutes_ago: float
    """That commit's minutes_ago (negative for edits made during the episode)."""
    message: str
    """The first line of that commit's message."""
    text: str
    """The line itself, without its newline."""


def commit_sha(
    parent_sha: str | None,
    author: str,
    message: str,
    minutes_ago: float,
    changes: Mapping[str, str | None],
) -> str:
    """Compute the sha of a commit from its parent and its content.

    Args:
        parent_sha: The previous commit's sha, None for the first commit.
        author: The commit's author.
        message: The commit's message.
        minutes_ago: The commit's time relative to the incident start.
        changes: Canonical path -> new content or None.

    Returns:
        The first 12 hex characters of a sha1 over a canonical JSON encoding of the arguments,
        so equal inputs give equal shas on every machine and run.
    """
    payload = [
        parent_sha or "",
        author,
        message,
        float(minutes_ago),
        [[path, content] for path, content in sorted(changes.items())],
    ]
    encoded = json.dumps(payload, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return hashlib.sha1(encoded.encode("utf-8"), usedforsecurity=False).hexdigest()[:12]


def make_commit(
    parent_sha: str | None,
    author: str,
    message: str,
    minutes_ago: float,
    changes: Mapping[str, str | None],
) -> Commit:
    """Build a commit, normalising its paths and computing its sha.

    Args:
        parent_sha: The previous commit's sha, None for the first commit.
        author: The commit's author.
        message: The commit's message.
        minutes_ago: Minutes before the incident start; negative for edits during the episode.
        changes: Path -> full new content, or None to delete the file. Paths are normalised.

    Returns:
        The commit.

    Raises:
        HistoryError: minutes_ago is not finite, a path names the root, or two paths normalise
            to the same file.
        PathOutsideTreeError: A path is malformed or outside the tree.
    """
    if not math.isfinite(minutes_ago):
        raise HistoryError(
            f"commit {message!r}: minutes_ago must be a finite number, not {minutes_ago!r}"
        )
    canonical: dict[str, str | None] = {}
    for raw, content in changes.items():
        path = normalize_path(raw)
        if not path:
            raise HistoryError(f"commit {message!r}: a change names the tree root; name a file")
        if path in canonical:
            raise HistoryError(f"commit {message!r}: {raw!r} and another path both name {path!r}")
        canonical[path] = content
    sha = commit_sha(parent_sha, author, message, minutes_ago, canonical)
    return Commit(sha, author, message, float(minutes_ago), canonical, parent_sha)


def split_lines(text: str) -> list[str]:
    r"""Split text into lines on "\n" only; a final newline does not start an extra line.

    Other characters str.splitlines() treats as breaks (form feeds, "\r", U+2028) stay in the
    line, so line numbers agree with editors and with Python tracebacks.
    """
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def join_lines(lines: Sequence[str], trailing_newline: bool) -> str:
    r"""Join lines with "\n", the inverse of split_lines().

    Args:
        lines: The lines, without newlines.
        trailing_newline: End with "\n". Forced when the last line is empty, since "a\n" would
            read back as the single line "a".

    Returns:
        The text; "" for no lines.
    """
    if not lines:
        return ""
    text = "\n".join(lines)
    return text + "\n" if trailing_newline or not lines[-1] else text


def reattribute(
    old_lines: Sequence[str],
    old_owners: Sequence[Commit],
    new_lines: Sequence[str],
    commit: Commit,
) -> list[Commit]:
    """Carry line ownership from one version of a text to the next.

    Lines the diff keeps keep their owner; every inserted or rewritten line goes to commit, so a
    commit that rewrites one line owns that line only.

    Args:
        old_lines: The previous version's lines.
        old_owners: The commit that owns each of old_lines.
        new_lines: The next version's lines.
        commit: The commit that produced new_lines.

    Returns:
        The owner of each of new_lines.
    """
    # autojunk would treat frequent lines (blank ones) as noise in files over 200 lines and
    # blame them on the wrong commit.
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    owners: list[Commit] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            owners.extend(old_owners[i1:i2])
        elif tag != "delete":
            owners.extend([commit] * (j2 - j1))
    return owners


def blame_lines(
    lines: Sequence[str], owners: Sequence[Commit], first_line: int = 1
) -> tuple[BlameLine, ...]:
    """Render owners as BlameLine values numbered from first_line."""
    return tuple(
        BlameLine(number, owner.sha, owner.author, owner.minutes_ago, owner.subject, text)
        for number, (text, owner) in enumerate(zip(lines, owners, strict=True), start=first_line)
    )


def replay(commits: Sequence[Commit]) -> dict[str, str]:
    """Apply commits, oldest first, to an empty tree.

    Args:
        commits: The history, each commit's parent being the previous one's sha.

    Returns:
        Canonical path -> content, sorted by path.

    Raises:
        HistoryError: A commit's sha does not match its content, the parent chain is broken, or
            a commit deletes a file that does not exist at that point.
    """
    files: dict[str, str] = {}
    parent: str | None = None
    for commit in commits:
        where = f"commit {commit.sha} ({commit.subject!r})"
        if commit.parent != parent:
            raise HistoryError(
                f"{where} has parent {commit.parent!r}, expected {parent!r}; pass the commits "
                "oldest first, each built on the previous one's sha"
            )
        expected = commit_sha(
            commit.parent, commit.author, commit.message, commit.minutes_ago, commit.changes
        )
        if commit.sha != expected:
            raise HistoryError(f"{where}: sha does not match content ({expected}); use make_commit")
        for path, content in commit.changes.items():
            if content is not None:
                files[path] = content
            elif files.pop(path, None) is None:
                raise HistoryError(f"{where} deletes {path!r}, which does not exist at that point")
        parent = commit.sha
    return dict(sorted(files.items()))


def blame_owners(commits: Sequence[Commit], path: str) -> list[Commit]:
    """Replay one file through the history and return the commit owning each final line.

    Args:
        commits: The history, oldest first.
        path: A canonical path.

    Returns:
        One commit per line of the file's last version; empty if the file ends up deleted or
        never existed.
    """
    lines: list[str] = []
    owners: list[Commit] = []
    for commit in commits:
        if path not in commit.changes:
            continue
        content = commit.changes[path]
        if content is None:
            # Nothing survives a deletion: a recreated file starts over.
            lines, owners = [], []
            continue
        new_lines = split_lines(content)
        owners = reattribute(lines, owners, new_lines, commit)
        lines = new_lines
    return owners


def _identity(text: str) -> str:
    return text


def load_history_dir(
    path: Path,
    render: Callable[[str], str] = _identity,
    files: dict[str, str] | None = None,
    parent: str | None = None,
) -> list[Commit]:
    """Read a scenario's history folder into commits, oldest first.

    The folder holds one subfolder per commit, named "NN-slug" and ordered by NN. Each holds a
    commit.toml (author, message, minutes_ago, optional deleted = [paths]) and the files the
    commit adds or changes, with full content, at any depth. __pycache__ folders and *.pyc files
    are skipped; loose files beside the commit folders are ignored.

    A commit.toml may also say `when = "..."` (rendered; a false word such as "false" or ""
    leaves the commit out for this seed) and list `[[patch]]` edits of files already in the
    tree: `path`, `find` (text that must occur exactly once) and `replace`. A family states its
    bug as such a patch, so the seed can choose which file and line it lands in.

    Args:
        path: The history folder.
        render: Applied to the text of every commit.toml and file before it is used, for the
            per-seed {{variable}} substitution.
        files: The tree's files before this folder (path -> content), for patches; updated in
            place as commits load. None: an empty tree.
        parent: The sha the first commit follows, if this folder continues another history.

    Returns:
        The commits, chained by parent sha.

    Raises:
        HistoryError: The folder or a commit folder is malformed; the message names the folder
            and what to fix.
    """
    if not path.is_dir():
        raise HistoryError(f"history folder {str(path)!r} does not exist or is not a folder")
    folders: list[tuple[int, str, Path]] = []
    for child in path.iterdir():
        if not child.is_dir() or child.name == "__pycache__" or child.name.startswith("."):
            continue
        match = _COMMIT_FOLDER.match(child.name)
        if not match:
            raise HistoryError(
                f"history folder {str(path)!r}: subfolder {child.name!r} is not named "
                "'NN-slug' (e.g. '01-initial'); rename it or move it out"
            )
        folders.append((int(match.group(1)), child.name, child))
    folders.sort()
    for (number, name, _), (next_number, next_name, _) in itertools.pairwise(folders):
        if number == next_number:
            raise HistoryError(
                f"history folder {str(path)!r}: {name!r} and {next_name!r} share the number "
                f"{number}; give each commit its own number"
            )
    commits: list[Commit] = []
    current = {} if files is None else files
    for _, _, folder in folders:
        commit = _load_commit(folder, commits[-1].sha if commits else parent, render, current)
        if commit is None:
            continue
        commits.append(commit)
        for changed, content in commit.changes.items():
            if content is None:
                current.pop(changed, None)
            else:
                current[changed] = content
    return commits


@dataclass(frozen=True, slots=True)
class _Meta:
    author: str
    message: str
    minutes_ago: float
    deleted: tuple[str, ...]
    patches: tuple[tuple[str, str, str], ...]
    """(path, find, replace) edits of files already in the tree."""
    wanted: bool
    """False when the commit's `when` leaves it out for this seed."""


def _load_commit(
    folder: Path, parent: str | None, render: Callable[[str], str], tree: Mapping[str, str]
) -> Commit | None:
    where = f"commit folder {str(folder)!r}"
    meta = _read_meta(folder, render)
    if not meta.wanted:
        return None
    changes: dict[str, str | None] = {
        path: render(text) for path, text in _scan_folder(folder, where)
    }
    for raw in meta.deleted:
        try:
            gone = normalize_path(raw)
        except PathOutsideTreeError as error:
            raise HistoryError(f"{where}: bad path in deleted: {error}") from error
        if gone in changes:
            raise HistoryError(f"{where}: {gone!r} is both listed in deleted and present as a file")
        changes[gone] = None
    for raw, find, replace in meta.patches:
        try:
            target = normalize_path(raw)
        except PathOutsideTreeError as error:
            raise HistoryError(f"{where}: bad path in patch: {error}") from error
        prior = changes.get(target) if target in changes else tree.get(target)
        if prior is None:
            raise HistoryError(f"{where}: patch names {target!r}, which is not in the tree")
        found = prior.count(find)
        if found != 1:
            raise HistoryError(
                f"{where}: patch of {target!r} must find its text exactly once, found it "
                f"{found} times: {find[:80]!r}"
            )
        changes[target] = prior.replace(find, replace)
    return _remembered_commit(parent, meta.author, meta.message, meta.minutes_ago, changes)


def _scan_folder(folder: Path, where: str) -> list[tuple[str, str]]:
    """A commit folder's files as (canonical path, text).

    The listing is walked once per folder (every seed of a family reads the same folders; a
    folder's contents are not expected to change under a running process, though an edited
    file's text is read again, see `_read_text`).
    """
    root = str(folder)
    listing = _SCANS.peek(root)
    if listing is None:
        found: list[tuple[str, str]] = []
        for directory, subdirs, files in os.walk(root):
            subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
            for name in sorted(files):
                full = os.path.join(directory, name)
                relative = os.path.relpath(full, root).replace(os.sep, "/")
                if name.endswith(".pyc") or relative == _META_FILE:
                    continue
                if os.path.islink(full):
                    raise HistoryError(
                        f"{where}: {relative!r} is a symlink; commit real files only"
                    )
                found.append((relative, full))
        listing = tuple(found)
        _SCANS.put(root, listing)
    scanned = []
    for relative, full in listing:
        try:
            text = _read_text(Path(full))
        except UnicodeDecodeError as error:
            raise HistoryError(f"{where}: {relative!r} is not UTF-8 text ({error})") from error
        scanned.append((normalize_path(relative), text))
    return scanned


_SCANS: Lru[str, tuple[tuple[str, str], ...]] = Lru(2048)
_COMMITS: Lru[tuple[object, ...], Commit] = Lru(4096)


def _remembered_commit(
    parent: str | None,
    author: str,
    message: str,
    minutes_ago: float,
    changes: Mapping[str, str | None],
) -> Commit:
    """`make_commit`, once per distinct commit.

    The seeds of a family replay the topology's commits with the same texts (rendering returns
    a text without templates unchanged), so they share its commits and skip hashing them again.
    """
    key = (parent, author, message, minutes_ago, tuple(sorted(changes.items())))
    known = _COMMITS.get(key)
    if known is not None:
        return known
    commit = make_commit(parent, author, message, minutes_ago, changes)
    _COMMITS.put(key, commit)
    return commit


_TEXTS: Lru[tuple[str, int, int], str] = Lru(8192)


def _read_text(file: Path) -> str:
    """A history file's text, one string object per content on disk.

    Every seed of a family replays the same topology files; rendering returns a text without
    templates unchanged, so reading each file once makes all those seeds' trees share one string
    per file instead of a copy each (about 70 KiB a seed on ads_platform). Keyed by path, size and
    modification time, so an edited file is read again.
    """
    stat = file.stat()
    key = (str(file), stat.st_mtime_ns, stat.st_size)
    text = _TEXTS.get(key)
    if text is not None:
        return text
    text = file.read_bytes().decode("utf-8")
    _TEXTS.put(key, text)
    return text


def _read_meta(folder: Path, render: Callable[[str], str]) -> _Meta:
    meta_file = folder / _META_FILE
    where = repr(str(meta_file))
    if not meta_file.is_file():
        raise HistoryError(
            f"commit folder {str(folder)!r} has no {_META_FILE}; add one with author, message "
            "and minutes_ago"
        )
    try:
        meta = tomllib.loads(render(meta_file.read_bytes().decode("utf-8")))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise HistoryError(f"{where} is not valid UTF-8 TOML: {error}") from error
    unknown = sorted(set(meta) - {*_REQUIRED_META, *_OPTIONAL_META})
    if unknown:
        raise HistoryError(
            f"{where}: unknown keys {unknown}; allowed: {[*_REQUIRED_META, *_OPTIONAL_META]}"
        )
    if "when" in meta and not truthy(meta["when"]):
        return _Meta("", "", 0.0, (), (), wanted=False)
    missing = [key for key in _REQUIRED_META if key not in meta]
    if missing:
        raise HistoryError(f"{where}: missing {missing}; required: {list(_REQUIRED_META)}")
    author, message, minutes_ago = meta["author"], meta["message"], meta["minutes_ago"]
    deleted = meta.get("deleted", [])
    if not isinstance(author, str) or not isinstance(message, str):
        raise HistoryError(f"{where}: 'author' and 'message' must be strings")
    if isinstance(minutes_ago, bool) or not isinstance(minutes_ago, int | float):
        raise HistoryError(f"{where}: 'minutes_ago' must be a number, not {minutes_ago!r}")
    if not isinstance(deleted, list) or not all(isinstance(item, str) for item in deleted):
        raise HistoryError(f"{where}: 'deleted' must be a list of path strings")
    patches = meta.get("patch", [])
    if not isinstance(patches, list) or not all(
        isinstance(p, dict)
        and set(p) == {"path", "find", "replace"}
        and all(isinstance(v, str) for v in p.values())
        for p in patches
    ):
        raise HistoryError(
            f"{where}: 'patch' must be a list of tables with string path, find and replace"
        )
    return _Meta(
        author,
        message,
        float(minutes_ago),
        tuple(deleted),
        tuple((p["path"], p["find"], p["replace"]) for p in patches),
        wanted=True,
    )
