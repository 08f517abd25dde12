"""Path normalisation for the virtual code tree: one spelling per file, nothing outside it."""

from __future__ import annotations

import re

from .errors import PathOutsideTreeError

__all__ = ["MAX_PATH_LENGTH", "ROOT", "is_within", "normalize_path"]

MAX_PATH_LENGTH = 512
"""Longest path accepted, in characters, before normalisation."""

ROOT = ""
"""The canonical spelling of the tree root."""

_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:")
_ALLOWED = (
    "paths are relative to the code tree root, separated by '/', "
    "e.g. 'ad_ranking/ranker.py' or '/ad_ranking/ranker.py'"
)


def _reject(path: str, problem: str, remedy: str) -> PathOutsideTreeError:
    return PathOutsideTreeError(f"path {path!r} {problem}: {_ALLOWED}; {remedy}")


def normalize_path(path: str) -> str:
    """Return the canonical form of a path in the code tree.

    The canonical form has no leading or trailing "/", no "." segments, no empty segments and
    no ".."; the root is "". A leading "/" means the tree root, so "/a/b.py", "./a/b.py",
    "a//b.py" and "a/x/../b.py" all become "a/b.py". Nothing is URL-decoded: "%2e%2e" is an
    ordinary (and harmless) file name.

    Args:
        path: The path as given by a caller, typically an agent.

    Returns:
        The canonical path, "" for the root.

    Raises:
        PathOutsideTreeError: The path climbs above the root with "..", contains NUL or other
            control characters or backslashes, is an absolute Windows path, is longer than
            MAX_PATH_LENGTH characters, or has a segment made only of whitespace.
    """
    if len(path) > MAX_PATH_LENGTH:
        shown = path[:60] + "..."
        raise _reject(
            shown,
            f"is {len(path)} characters long, more than the {MAX_PATH_LENGTH} allowed",
            "give a shorter path",
        )
    if any(ord(char) < 0x20 or char == "\x7f" for char in path):
        raise _reject(path, "contains a NUL or control character", "remove it")
    if "\\" in path:
        raise _reject(path, "contains a backslash", "use '/' as the separator")
    if _WINDOWS_DRIVE.match(path):
        raise _reject(path, "is an absolute Windows path", "drop the drive letter")
    parts: list[str] = []
    for segment in path.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if not parts:
                raise _reject(
                    path,
                    "escapes the tree root with '..'",
                    "nothing outside the code tree exists; give a path inside it",
                )
            parts.pop()
            continue
        if not segment.strip():
            raise _reject(path, "has a segment made only of whitespace", "remove that segment")
        parts.append(segment)
    return "/".join(parts)


def is_within(path: str, directory: str) -> bool:
    """Tell whether a canonical path is a directory or lies under it.

    Args:
        path: A canonical path (see normalize_path).
        directory: A canonical directory path; "" (the root) contains everything.

    Returns:
        True if path equals directory or is below it, comparing whole segments, so "tests2/x"
        is not within "tests".
    """
    if not directory:
        return True
    return path == directory or path.startswith(directory + "/")
