"""Tests for path normalisation in the virtual code tree."""

from __future__ import annotations

import pytest

from metasre.simulator.errors import PathOutsideTreeError, SimulatorError
from metasre.simulator.paths import MAX_PATH_LENGTH, is_within, normalize_path


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        pytest.param("a/b.py", "a/b.py", id="plain"),
        pytest.param("./a/b.py", "a/b.py", id="dot-prefix"),
        pytest.param("/a/b.py", "a/b.py", id="leading-slash-is-root"),
        pytest.param("a//b.py", "a/b.py", id="double-slash"),
        pytest.param("a/b/", "a/b", id="trailing-slash"),
        pytest.param("a/./b.py", "a/b.py", id="inner-dot"),
        pytest.param("a/../b.py", "b.py", id="dotdot-inside"),
        pytest.param("a/x/y/../../b.py", "a/b.py", id="dotdot-twice-inside"),
        pytest.param("//server/share", "server/share", id="unc-like-stays-inside"),
        pytest.param("", "", id="empty-is-root"),
        pytest.param(".", "", id="dot-is-root"),
        pytest.param("/", "", id="slash-is-root"),
        pytest.param("./", "", id="dot-slash-is-root"),
        pytest.param("a/..", "", id="dotdot-back-to-root"),
        pytest.param("%2e%2e/etc/passwd", "%2e%2e/etc/passwd", id="percent-encoding-is-literal"),
        pytest.param("...", "...", id="three-dots-is-a-name"),
        pytest.param("~/x", "~/x", id="tilde-is-a-name"),
        pytest.param("a b/c d.py", "a b/c d.py", id="inner-spaces"),
        pytest.param("dir:x/f", "dir:x/f", id="colon-not-drive"),
        pytest.param("ünïcode/ß.py", "ünïcode/ß.py", id="unicode"),
    ],
)
def test_normalize_accepts(given: str, expected: str) -> None:
    assert normalize_path(given) == expected


def test_normalize_is_idempotent() -> None:
    for path in ["a/b.py", "", "x/y/z", "%2e%2e"]:
        assert normalize_path(normalize_path(path)) == normalize_path(path)


@pytest.mark.parametrize(
    ("given", "fragment"),
    [
        pytest.param("..", "escapes the tree root", id="dotdot"),
        pytest.param("../x", "escapes the tree root", id="dotdot-prefix"),
        pytest.param("a/../../x", "escapes the tree root", id="dotdot-past-root"),
        pytest.param("tests/../../etc/passwd", "escapes the tree root", id="tests-escape"),
        pytest.param("/../etc/passwd", "escapes the tree root", id="absolute-dotdot"),
        pytest.param("./../x", "escapes the tree root", id="dot-dotdot"),
        pytest.param("a/b/../../../x", "escapes the tree root", id="deep-escape"),
        pytest.param("a\x00b", "control character", id="nul"),
        pytest.param("a\nb", "control character", id="newline"),
        pytest.param("a\\b.py", "backslash", id="backslash"),
        pytest.param("..\\..\\etc", "backslash", id="windows-traversal"),
        pytest.param("C:\\Windows\\x", "backslash", id="windows-absolute-backslash"),
        pytest.param("C:/Windows/x", "absolute Windows path", id="windows-absolute-slash"),
        pytest.param("c:", "absolute Windows path", id="drive-only"),
        pytest.param("a/ /b", "whitespace", id="blank-segment"),
        pytest.param("a/\t/b", "control character", id="tab-segment"),
        pytest.param("x" * (MAX_PATH_LENGTH + 1), "characters long", id="too-long"),
    ],
)
def test_normalize_rejects(given: str, fragment: str) -> None:
    with pytest.raises(PathOutsideTreeError) as caught:
        normalize_path(given)
    message = str(caught.value)
    assert fragment in message
    # What is allowed, and an example, are always in the message.
    assert "relative to the code tree root" in message


def test_error_message_names_the_path() -> None:
    with pytest.raises(PathOutsideTreeError, match=r"'tests/\.\./\.\./etc/passwd'"):
        normalize_path("tests/../../etc/passwd")


def test_long_path_message_is_truncated() -> None:
    with pytest.raises(PathOutsideTreeError) as caught:
        normalize_path("y" * 10_000)
    assert len(str(caught.value)) < 400


def test_max_length_is_allowed() -> None:
    assert normalize_path("x" * MAX_PATH_LENGTH) == "x" * MAX_PATH_LENGTH


def test_errors_share_the_base_class() -> None:
    assert issubclass(PathOutsideTreeError, SimulatorError)


@pytest.mark.parametrize(
    ("path", "directory", "expected"),
    [
        pytest.param("tests/unit/t.py", "tests", True, id="below"),
        pytest.param("tests", "tests", True, id="itself"),
        pytest.param("tests2/t.py", "tests", False, id="sibling-with-prefix-name"),
        pytest.param("a.py", "", True, id="root-contains-all"),
        pytest.param("", "tests", False, id="root-not-within-child"),
    ],
)
def test_is_within(path: str, directory: str, expected: bool) -> None:
    assert is_within(path, directory) is expected
