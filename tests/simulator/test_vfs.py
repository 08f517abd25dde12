"""Tests for the virtual code tree: base snapshot, workspace edits, diff, blame, history loading."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from types import MappingProxyType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metasre.simulator.errors import (
    FileNotFoundInTreeError,
    HistoryError,
    InvalidEditError,
    LineRangeError,
    PathKindError,
    PathOutsideTreeError,
    ReadOnlyPathError,
    SimulatorError,
)
from metasre.simulator.history import Commit, load_history_dir, make_commit, split_lines
from metasre.simulator.vfs import BaseTree, FileView, Workspace

APP = "svc/app.py"
APP_V1 = "import os\n\ndef rank(ads):\n    return sorted(ads)\n"
APP_V2 = "import os\n\ndef rank(ads):\n    return sorted(ads, key=score)\n"
README = "hello\nworld"  # no trailing newline on purpose


def history() -> list[Commit]:
    first = make_commit(
        None,
        "dana@ads-team",
        "initial import",
        120,
        {
            APP: APP_V1,
            "svc/util.py": "x = 1\n",
            "svc-old/legacy.py": "old = True\n",
            "svc.py": "shim = 1\n",
            "tests/unit/test_app.py": "def test_rank():\n    assert True\n",
            "README.md": README,
            "empty.txt": "",
            "gone.py": "bye\n",
        },
    )
    second = make_commit(
        first.sha, "lee@ads-team", "rank by score\n\nLonger body.", 14, {APP: APP_V2}
    )
    third = make_commit(second.sha, "dana@ads-team", "drop gone.py", 10, {"gone.py": None})
    return [first, second, third]


@pytest.fixture
def base() -> BaseTree:
    return BaseTree.from_commits(history())


@pytest.fixture
def ws(base: BaseTree) -> Workspace:
    return Workspace(base)


def edit(ws: Workspace, action: str, start: int, end: int | None = None, content: str = "") -> None:
    ws.edit(
        APP,
        action=action,  # type: ignore[arg-type]
        start_line=start,
        end_line=end,
        content=content,
        author="agent-1",
        at_minute=3,
    )


# --- commits and shas -------------------------------------------------------------------------


def test_sha_is_pinned() -> None:
    commit = make_commit(None, "dana@ads-team", "initial", 120, {"a.py": "x = 1\n"})
    assert commit.sha == PINNED_SHA
    assert re.fullmatch(r"[0-9a-f]{12}", commit.sha)


PINNED_SHA = "32947005729b"


def test_sha_is_deterministic_and_content_addressed() -> None:
    a = make_commit(None, "dana", "m", 5, {"b.py": "2", "a.py": "1"})
    b = make_commit(None, "dana", "m", 5.0, {"./a.py": "1", "/b.py": "2"})
    assert a.sha == b.sha
    assert a == b
    changed = [
        make_commit("abcdefabcdef", "dana", "m", 5, {"a.py": "1", "b.py": "2"}),
        make_commit(None, "lee", "m", 5, {"a.py": "1", "b.py": "2"}),
        make_commit(None, "dana", "m2", 5, {"a.py": "1", "b.py": "2"}),
        make_commit(None, "dana", "m", 6, {"a.py": "1", "b.py": "2"}),
        make_commit(None, "dana", "m", 5, {"a.py": "1", "b.py": None}),
    ]
    assert len({c.sha for c in changed} | {a.sha}) == len(changed) + 1


def test_commit_is_a_frozen_value() -> None:
    source: dict[str, str | None] = {"a.py": "1"}
    commit = make_commit(None, "dana", "m", 1, source)
    source["a.py"] = "mutated"
    assert commit.changes["a.py"] == "1"
    assert isinstance(commit.changes, MappingProxyType)
    with pytest.raises(dataclasses.FrozenInstanceError):
        commit.author = "mallory"  # type: ignore[misc]
    assert hash(commit) == hash(make_commit(None, "dana", "m", 1, {"a.py": "1"}))


def test_commit_rejects_bad_sha_and_bad_changes() -> None:
    with pytest.raises(HistoryError, match="make_commit"):
        Commit("nothex", "dana", "m", 1.0, {})
    with pytest.raises(HistoryError, match="finite"):
        make_commit(None, "dana", "m", float("nan"), {"a.py": "1"})
    with pytest.raises(HistoryError, match=re.escape("both name 'a.py'")):
        make_commit(None, "dana", "m", 1, {"a.py": "1", "./a.py": "2"})
    with pytest.raises(HistoryError, match="root"):
        make_commit(None, "dana", "m", 1, {"/": "1"})
    with pytest.raises(PathOutsideTreeError):
        make_commit(None, "dana", "m", 1, {"../a.py": "1"})


# --- base tree --------------------------------------------------------------------------------


def test_base_tree_replays_history(base: BaseTree) -> None:
    assert isinstance(base.files, MappingProxyType)
    assert base.files[APP] == APP_V2
    assert "gone.py" not in base.files
    assert list(base.files) == sorted(base.files)
    assert base.head == history()[-1].sha
    assert [c.subject for c in base.commits] == ["initial import", "rank by score", "drop gone.py"]


def test_base_tree_rejects_broken_histories() -> None:
    first, second, _ = history()
    with pytest.raises(HistoryError, match="parent"):
        BaseTree.from_commits([second])
    tampered = dataclasses.replace(second, message="something else")
    with pytest.raises(HistoryError, match="does not match"):
        BaseTree.from_commits([first, tampered])
    bad_delete = make_commit(first.sha, "dana", "rm", 1, {"nope.py": None})
    with pytest.raises(HistoryError, match=re.escape("'nope.py', which does not exist")):
        BaseTree.from_commits([first, bad_delete])
    clash = make_commit(first.sha, "dana", "clash", 1, {"svc/app.py/x.py": "1"})
    with pytest.raises(HistoryError, match="both a file and the folder"):
        BaseTree.from_commits([first, clash])


def test_empty_history_gives_an_empty_tree() -> None:
    tree = BaseTree.from_commits([])
    assert tree.head is None
    assert Workspace(tree).list_dir() == []
    assert Workspace(tree).walk() == []


def test_readonly_prefixes(base: BaseTree) -> None:
    assert base.is_readonly("tests/unit/test_app.py")
    assert base.is_readonly("tests")
    assert base.is_readonly("./tests/../tests/unit/x.py")
    assert not base.is_readonly(APP)
    custom = BaseTree.from_commits(history(), readonly_prefixes=("svc", "README.md"))
    assert custom.is_readonly("svc/util.py")
    assert custom.is_readonly("README.md")
    assert not custom.is_readonly("svc-old/legacy.py")
    assert not custom.is_readonly("tests/unit/test_app.py")


# --- workspace creation and reading -----------------------------------------------------------


def test_workspace_does_not_copy_the_base(base: BaseTree) -> None:
    ws = Workspace(base)
    assert ws.base is base
    assert ws.base.files is base.files
    assert ws.changed_files() == {}
    assert ws.edits() == ()
    assert ws.head == base.head


def test_workspaces_are_independent(base: BaseTree) -> None:
    one, two = Workspace(base), Workspace(base)
    one.edit(APP, action="delete", start_line=1, author="a", at_minute=0)
    assert two.read(APP) == APP_V2
    assert base.files[APP] == APP_V2
    assert set(one.changed_files()) == {APP}


@pytest.mark.parametrize(
    "spelling", [APP, "./svc/app.py", "/svc/app.py", "svc//app.py", "x/../svc/app.py"]
)
def test_read_accepts_every_spelling(ws: Workspace, spelling: str) -> None:
    assert ws.read(spelling) == APP_V2


def test_read_missing_file_suggests_close_matches(ws: Workspace) -> None:
    with pytest.raises(FileNotFoundInTreeError, match=r"no file 'svc/ap\.py'.*'svc/app\.py'"):
        ws.read("svc/ap.py")
    with pytest.raises(FileNotFoundInTreeError, match=re.escape("did you mean 'svc/app.py'")):
        ws.read("app.py")
    with pytest.raises(FileNotFoundInTreeError, match="list_files"):
        ws.read("zzzzzzzzzzzzzzzz/qqqqqqqq")


def test_read_folder_is_a_kind_error(ws: Workspace) -> None:
    with pytest.raises(PathKindError, match="'svc' is a folder"):
        ws.read("svc/")
    with pytest.raises(PathKindError, match="'/' is a folder"):
        ws.read("")


@pytest.mark.parametrize(
    "path",
    [
        "tests/../../etc/passwd",
        "../../etc/passwd",
        "/../etc/passwd",
        "svc/../../x",
        "..\\x",
        "a\x00",
    ],
)
def test_traversal_is_refused_everywhere(ws: Workspace, path: str) -> None:
    calls = [
        lambda: ws.read(path),
        lambda: ws.view(path),
        lambda: ws.exists(path),
        lambda: ws.is_dir(path),
        lambda: ws.list_dir(path),
        lambda: ws.walk(path),
        lambda: ws.blame(path),
        lambda: ws.diff(path),
        lambda: ws.log(path),
        lambda: ws.snapshot([path]),
        lambda: ws.content_hash([path]),
        lambda: ws.edit(path, action="delete", start_line=1, author="a", at_minute=0),
    ]
    for call in calls:
        with pytest.raises(PathOutsideTreeError):
            call()


def test_percent_encoded_dots_stay_literal(ws: Workspace) -> None:
    assert not ws.exists("%2e%2e/etc/passwd")
    with pytest.raises(FileNotFoundInTreeError, match="'%2e%2e/etc/passwd'"):
        ws.read("%2e%2e/etc/passwd")


def test_exists_and_is_dir(ws: Workspace) -> None:
    assert ws.exists(APP) and not ws.is_dir(APP)
    assert ws.exists("svc") and ws.is_dir("svc/")
    assert ws.exists("") and ws.is_dir("/")
    assert not ws.exists("gone.py")
    assert not ws.exists("sv")


def test_list_dir(ws: Workspace) -> None:
    assert ws.list_dir() == [
        "README.md",
        "empty.txt",
        "svc-old/",
        "svc.py",
        "svc/",
        "tests/",
    ]
    assert ws.list_dir("svc") == ["app.py", "util.py"]
    assert ws.list_dir("/tests/") == ["unit/"]
    with pytest.raises(PathKindError, match="is a file"):
        ws.list_dir(APP)
    with pytest.raises(FileNotFoundInTreeError, match=r"no folder 'test'.*'tests'"):
        ws.list_dir("test")


def test_walk(ws: Workspace) -> None:
    assert ws.walk() == sorted(ws.base.files)
    assert ws.walk("svc") == ["svc/app.py", "svc/util.py"]
    assert ws.walk("./tests") == ["tests/unit/test_app.py"]
    assert ws.walk(APP) == [APP]
    with pytest.raises(FileNotFoundInTreeError):
        ws.walk("sv")


# --- view -------------------------------------------------------------------------------------


def test_view_whole_file_and_render(ws: Workspace) -> None:
    view = ws.view(APP)
    assert view == FileView(APP, 1, 4, 4, tuple(APP_V2.splitlines()))
    assert view.render() == (
        "svc/app.py (lines 1-4 of 4)\n"
        "   1 | import os\n"
        "   2 |\n"
        "   3 | def rank(ads):\n"
        "   4 |     return sorted(ads, key=score)"
    )


def test_view_ranges(ws: Workspace) -> None:
    assert ws.view(APP, 2, 3).lines == ("", "def rank(ads):")
    assert ws.view(APP, 3).lines == ("def rank(ads):", "    return sorted(ads, key=score)")
    assert ws.view(APP, end_line=1).lines == ("import os",)
    clamped = ws.view(APP, 3, 99)
    assert (clamped.start_line, clamped.end_line, clamped.total_lines) == (3, 4, 4)


def test_view_wide_numbers_stay_aligned(base: BaseTree) -> None:
    text = "".join(f"line {n}\n" for n in range(1, 10_002))
    tree = BaseTree.from_commits([make_commit(None, "d", "big", 1, {"big.txt": text})])
    rendered = Workspace(tree).view("big.txt", 9_999, 10_001).render().splitlines()
    assert rendered[1:] == [" 9999 | line 9999", "10000 | line 10000", "10001 | line 10001"]


@pytest.mark.parametrize(
    ("start", "end"),
    [
        pytest.param(0, None, id="start-zero"),
        pytest.param(-1, 2, id="start-negative"),
        pytest.param(3, 2, id="end-before-start"),
        pytest.param(5, None, id="start-past-eof"),
        pytest.param(5, 9, id="range-past-eof"),
    ],
)
def test_view_rejects_bad_ranges(ws: Workspace, start: int, end: int | None) -> None:
    with pytest.raises(LineRangeError, match=re.escape("'svc/app.py' has 4 lines")):
        ws.view(APP, start, end)


def test_view_empty_file(ws: Workspace) -> None:
    view = ws.view("empty.txt")
    assert (view.start_line, view.end_line, view.total_lines, view.lines) == (1, 0, 0, ())
    assert view.render() == "empty.txt (empty file)"
    with pytest.raises(LineRangeError, match="has 0 lines"):
        ws.view("empty.txt", 2)


# --- edits ------------------------------------------------------------------------------------


def test_replace_one_line(ws: Workspace) -> None:
    record = ws.edit(
        APP,
        action="replace",
        start_line=4,
        content="    return sorted(ads, key=lambda ad: ad['score'])",
        author="agent-1",
        at_minute=2.5,
    )
    assert ws.read(APP).endswith("key=lambda ad: ad['score'])\n")
    assert record.seq == 1
    assert record.path == APP
    assert (record.action, record.start_line, record.end_line) == ("replace", 4, 4)
    assert record.removed == ("    return sorted(ads, key=score)",)
    assert record.inserted == ("    return sorted(ads, key=lambda ad: ad['score'])",)
    assert (record.author, record.at_minute) == ("agent-1", 2.5)
    commit = ws.log(limit=1)[0]
    assert commit.sha == record.commit_sha == ws.head
    assert (commit.author, commit.minutes_ago, commit.message) == (
        "agent-1",
        -2.5,
        "edit svc/app.py lines 4-4",
    )
    assert commit.parent == ws.base.head


def test_replace_range_with_fewer_lines(ws: Workspace) -> None:
    edit(ws, "replace", 2, 4, "pass\n")
    assert ws.read(APP) == "import os\npass\n"


def test_replace_with_empty_content_deletes(ws: Workspace) -> None:
    edit(ws, "replace", 1, 2, "")
    assert ws.read(APP) == "def rank(ads):\n    return sorted(ads, key=score)\n"


def test_insert_in_the_middle_at_start_and_at_end(ws: Workspace) -> None:
    edit(ws, "insert", 3, content="# ranking\n")
    assert ws.view(APP, 3, 4).lines == ("# ranking", "def rank(ads):")
    edit(ws, "insert", 1, content="#!/usr/bin/env python\n")
    assert ws.view(APP, 1, 1).lines == ("#!/usr/bin/env python",)
    edit(ws, "insert", 7, content="# end\n# really")
    assert ws.read(APP).endswith("key=score)\n# end\n# really\n")
    records = ws.edits()
    assert [(r.start_line, r.end_line) for r in records] == [(3, 3), (1, 1), (7, 7)]
    assert ws.log(limit=1)[0].message == "edit svc/app.py lines 7-8"


def test_insert_blank_line(ws: Workspace) -> None:
    edit(ws, "insert", 2, content="\n")
    assert ws.read(APP) == "import os\n\n\ndef rank(ads):\n    return sorted(ads, key=score)\n"


def test_delete(ws: Workspace) -> None:
    edit(ws, "delete", 1, 2)
    assert ws.read(APP) == "def rank(ads):\n    return sorted(ads, key=score)\n"
    edit(ws, "delete", 2)
    assert ws.read(APP) == "def rank(ads):\n"
    assert ws.edits()[-1].removed == ("    return sorted(ads, key=score)",)


def test_deleting_every_line_leaves_an_empty_file(ws: Workspace) -> None:
    edit(ws, "delete", 1, 4)
    assert ws.read(APP) == ""
    edit(ws, "insert", 1, content="x = 1")
    assert ws.read(APP) == "x = 1\n"


@pytest.mark.parametrize(
    ("action", "start", "end", "content", "message"),
    [
        pytest.param(
            "replace",
            0,
            None,
            "x",
            "replace needs 1 <= start_line <= end_line <= 4",
            id="replace-zero",
        ),
        pytest.param(
            "replace", 5, None, "x", "got start_line=5, end_line=5", id="replace-past-eof"
        ),
        pytest.param("replace", 3, 2, "x", "got start_line=3, end_line=2", id="replace-reversed"),
        pytest.param("replace", 2, 9, "x", "end_line=9", id="replace-end-past-eof"),
        pytest.param("delete", 0, 1, "", "delete needs", id="delete-zero"),
        pytest.param("delete", 4, 5, "", "delete needs", id="delete-past-eof"),
        pytest.param("insert", 0, None, "x", "insert needs 1 <= start_line <= 5", id="insert-zero"),
        pytest.param("insert", 6, None, "x", "5 appends), got 6", id="insert-past-append"),
    ],
)
def test_edit_rejects_bad_ranges(
    ws: Workspace, action: str, start: int, end: int | None, content: str, message: str
) -> None:
    with pytest.raises(LineRangeError, match=re.escape("'svc/app.py' has 4 lines")) as caught:
        edit(ws, action, start, end, content)
    assert message in str(caught.value)
    assert ws.read(APP) == APP_V2
    assert ws.edits() == ()


def test_edit_on_empty_file(ws: Workspace) -> None:
    with pytest.raises(LineRangeError, match=r"'empty\.txt' is empty.*use insert at line 1"):
        ws.edit("empty.txt", action="replace", start_line=1, content="x", author="a", at_minute=0)
    ws.edit("empty.txt", action="insert", start_line=1, content="x", author="a", at_minute=0)
    assert ws.read("empty.txt") == "x\n"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param({"action": "rewrite"}, "unknown edit action 'rewrite'", id="unknown-action"),
        pytest.param(
            {"action": "delete", "content": "x"}, "delete takes no content", id="delete-content"
        ),
        pytest.param(
            {"action": "insert", "content": ""}, "insert needs content", id="insert-empty"
        ),
        pytest.param(
            {"action": "insert", "content": "x", "end_line": 3},
            "takes no end_line",
            id="insert-end",
        ),
        pytest.param({"at_minute": -1}, ">= 0", id="negative-minute"),
        pytest.param({"at_minute": float("inf")}, "finite", id="infinite-minute"),
        pytest.param({"author": ""}, "author", id="empty-author"),
    ],
)
def test_edit_rejects_bad_arguments(ws: Workspace, kwargs: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {
        "action": "replace",
        "start_line": 1,
        "content": "x",
        "author": "agent-1",
        "at_minute": 1,
    }
    arguments.update(kwargs)
    with pytest.raises(InvalidEditError, match=re.escape(message)):
        ws.edit(APP, **arguments)  # type: ignore[arg-type]
    assert ws.edits() == ()


def test_edit_clock_never_goes_back(ws: Workspace) -> None:
    ws.edit(APP, action="delete", start_line=1, author="a", at_minute=5)
    ws.edit(APP, action="delete", start_line=1, author="b", at_minute=5)
    with pytest.raises(InvalidEditError, match="never goes back"):
        ws.edit(APP, action="delete", start_line=1, author="a", at_minute=4)


def test_edit_cannot_create_files_or_edit_folders(ws: Workspace) -> None:
    with pytest.raises(FileNotFoundInTreeError, match=re.escape("no file 'svc/new.py'")):
        ws.edit("svc/new.py", action="insert", start_line=1, content="x", author="a", at_minute=0)
    with pytest.raises(PathKindError):
        ws.edit("svc", action="insert", start_line=1, content="x", author="a", at_minute=0)


@pytest.mark.parametrize(
    "path", ["tests/unit/test_app.py", "./tests/unit/test_app.py", "svc/../tests/unit/test_app.py"]
)
def test_tests_are_read_only(ws: Workspace, path: str) -> None:
    with pytest.raises(ReadOnlyPathError, match="tests/ is read-only: fix the code, not the tests"):
        ws.edit(path, action="replace", start_line=2, content="    pass", author="a", at_minute=0)
    assert ws.changed_files() == {}
    assert ws.edits() == ()


def test_trailing_newline_is_preserved(ws: Workspace) -> None:
    ws.edit("README.md", action="replace", start_line=2, content="there\n", author="a", at_minute=0)
    assert ws.read("README.md") == "hello\nthere"
    ws.edit("README.md", action="insert", start_line=3, content="again", author="a", at_minute=0)
    assert ws.read("README.md") == "hello\nthere\nagain"
    edit(ws, "replace", 4, content="    return []")
    assert ws.read(APP).endswith("    return []\n")


def test_restoring_the_original_leaves_nothing_changed(ws: Workspace) -> None:
    edit(ws, "replace", 4, content="    return []")
    assert set(ws.changed_files()) == {APP}
    edit(ws, "replace", 4, content="    return sorted(ads, key=score)")
    assert ws.changed_files() == {}
    assert ws.diff() == ""
    assert len(ws.edits()) == 2  # the history still tells the story


def test_custom_commit_message(ws: Workspace) -> None:
    ws.edit(APP, action="delete", start_line=1, author="a", at_minute=0, message="drop import")
    assert ws.log(APP, limit=1)[0].message == "drop import"


def test_reset_drops_everything_without_copying(ws: Workspace, base: BaseTree) -> None:
    edit(ws, "delete", 1)
    ws.reset()
    assert ws.changed_files() == {}
    assert ws.edits() == ()
    assert ws.read(APP) == APP_V2
    assert ws.head == base.head
    assert ws.base.files is base.files


def test_find_line(ws: Workspace) -> None:
    assert ws.find_line(APP, "sorted(") == 4
    assert ws.find_line(APP, "nowhere") is None


# --- diff -------------------------------------------------------------------------------------


def test_diff_is_exact(ws: Workspace) -> None:
    edit(ws, "replace", 4, content="    return sorted(ads, key=lambda ad: ad['score'])")
    assert ws.diff(APP) == (
        "--- a/svc/app.py\n"
        "+++ b/svc/app.py\n"
        "@@ -1,4 +1,4 @@\n"
        " import os\n"
        " \n"
        " def rank(ads):\n"
        "-    return sorted(ads, key=score)\n"
        "+    return sorted(ads, key=lambda ad: ad['score'])\n"
    )


def test_diff_marks_missing_final_newline(ws: Workspace) -> None:
    ws.edit("README.md", action="replace", start_line=2, content="there", author="a", at_minute=0)
    assert ws.diff("README.md") == (
        "--- a/README.md\n"
        "+++ b/README.md\n"
        "@@ -1,2 +1,2 @@\n"
        " hello\n"
        "-world\n"
        "\\ No newline at end of file\n"
        "+there\n"
        "\\ No newline at end of file\n"
    )


def test_diff_of_all_files_is_sorted_and_scoped(ws: Workspace) -> None:
    edit(ws, "delete", 1)
    ws.edit("README.md", action="delete", start_line=1, author="a", at_minute=3)
    whole = ws.diff()
    assert whole.index("--- a/README.md") < whole.index("--- a/svc/app.py")
    assert ws.diff("svc") == ws.diff(APP)
    assert ws.diff("svc").startswith("--- a/svc/app.py\n")
    assert ws.diff("svc/util.py") == ""
    assert ws.diff("tests") == ""
    with pytest.raises(FileNotFoundInTreeError):
        ws.diff("nope.py")


def test_diff_is_empty_without_edits(ws: Workspace) -> None:
    assert ws.diff() == ""


# --- blame ------------------------------------------------------------------------------------


def test_base_blame_attributes_the_rewritten_line_only(base: BaseTree) -> None:
    first, second, _ = history()
    blame = base.blame(APP)
    assert [b.sha for b in blame] == [first.sha, first.sha, first.sha, second.sha]
    assert [b.line for b in blame] == [1, 2, 3, 4]
    assert blame[3].author == "lee@ads-team"
    assert blame[3].message == "rank by score"
    assert blame[3].minutes_ago == 14
    assert blame[3].text == "    return sorted(ads, key=score)"
    assert base.blame(APP) is blame  # cached on the shared tree


def test_base_blame_middle_insertion_and_deletion() -> None:
    one = make_commit(None, "a", "one", 30, {"f.py": "a\nb\nc\nd\n"})
    two = make_commit(one.sha, "b", "two", 20, {"f.py": "a\nb\nNEW\nc\nd\n"})
    three = make_commit(two.sha, "c", "three", 10, {"f.py": "a\nNEW\nc\nd\nTAIL\n"})
    tree = BaseTree.from_commits([one, two, three])
    assert [(b.text, b.author) for b in tree.blame("f.py")] == [
        ("a", "a"),
        ("NEW", "b"),
        ("c", "a"),
        ("d", "a"),
        ("TAIL", "c"),
    ]


def test_blame_of_recreated_file_starts_over() -> None:
    one = make_commit(None, "a", "one", 30, {"f.py": "x\ny\n"})
    two = make_commit(one.sha, "b", "rm", 20, {"f.py": None})
    three = make_commit(two.sha, "c", "back", 10, {"f.py": "x\ny\n"})
    tree = BaseTree.from_commits([one, two, three])
    assert {b.author for b in tree.blame("f.py")} == {"c"}


def test_blame_after_agent_middle_insertion(ws: Workspace) -> None:
    first, second, _ = history()
    record = ws.edit(
        APP,
        action="insert",
        start_line=3,
        content="# why\n# because",
        author="agent-7",
        at_minute=4,
    )
    blame = ws.blame(APP)
    assert [(b.line, b.sha) for b in blame] == [
        (1, first.sha),
        (2, first.sha),
        (3, record.commit_sha),
        (4, record.commit_sha),
        (5, first.sha),
        (6, second.sha),
    ]
    assert blame[2].author == "agent-7"
    assert blame[2].minutes_ago == -4
    assert blame[2].message == "edit svc/app.py lines 3-4"
    assert [b.text for b in blame] == ws.read(APP).splitlines()


def test_blame_keeps_lines_an_agent_rewrote_unchanged(ws: Workspace) -> None:
    first, _, _ = history()
    record = ws.edit(
        APP,
        action="replace",
        start_line=3,
        end_line=4,
        content="def rank(ads):\n    return list(ads)",
        author="agent-1",
        at_minute=1,
    )
    blame = ws.blame(APP)
    assert blame[2].sha == first.sha
    assert blame[3].sha == record.commit_sha


def test_blame_range_and_later_edits(ws: Workspace) -> None:
    edit(ws, "delete", 1, 2)
    blame = ws.blame(APP, 2)
    assert [(b.line, b.author) for b in blame] == [(2, "lee@ads-team")]
    assert ws.blame(APP, 1, 99)[-1].line == 2
    with pytest.raises(LineRangeError, match="has 2 lines"):
        ws.blame(APP, 3)


def test_blame_does_not_change_the_shared_base(ws: Workspace, base: BaseTree) -> None:
    before = base.blame(APP)
    edit(ws, "replace", 1, content="import sys")
    assert base.blame(APP) == before
    assert Workspace(base).blame(APP) == before


# --- log, snapshot, hash ----------------------------------------------------------------------


def test_log_is_newest_first_and_filtered(ws: Workspace) -> None:
    first, second, third = history()
    assert ws.log() == (third, second, first)
    edit(ws, "delete", 1)
    agent = ws.log(limit=1)[0]
    assert agent.author == "agent-1"
    assert ws.log(APP) == (agent, second, first)
    assert ws.log("svc/") == (agent, second, first)
    assert ws.log("README.md") == (first,)
    assert ws.log("gone.py") == (third, first)  # deleted files keep their history
    assert ws.log(limit=2) == (agent, third)
    with pytest.raises(ValueError, match="limit"):
        ws.log(limit=0)


def test_snapshot(ws: Workspace) -> None:
    edit(ws, "delete", 1)
    snapshot = ws.snapshot()
    assert list(snapshot) == sorted(ws.base.files)
    assert snapshot[APP] == ws.read(APP).encode("utf-8")
    assert ws.snapshot(["svc", "/README.md"]) == {
        "README.md": README.encode(),
        APP: ws.read(APP).encode(),
        "svc/util.py": b"x = 1\n",
    }
    with pytest.raises(FileNotFoundInTreeError):
        ws.snapshot(["nope.py"])


def test_content_hash(ws: Workspace) -> None:
    start = ws.content_hash([APP, "svc/util.py"])
    assert re.fullmatch(r"[0-9a-f]{64}", start)
    assert ws.content_hash(["svc/util.py", "./svc/app.py", APP]) == start
    assert ws.content_hash(["svc"]) == start
    assert ws.content_hash([APP]) != start
    edit(ws, "replace", 1, content="import sys")
    assert ws.content_hash([APP, "svc/util.py"]) != start
    assert ws.content_hash(["svc/util.py"]) == Workspace(ws.base).content_hash(["svc/util.py"])
    edit(ws, "replace", 1, content="import os")
    assert ws.content_hash([APP, "svc/util.py"]) == start


# --- determinism ------------------------------------------------------------------------------


def play(ws: Workspace) -> None:
    ws.edit(APP, action="insert", start_line=2, content="import sys", author="a", at_minute=1)
    ws.edit(APP, action="replace", start_line=5, content="    return []", author="b", at_minute=2)
    ws.edit("README.md", action="delete", start_line=1, author="a", at_minute=2.5)


def test_same_edits_give_the_same_world() -> None:
    one, two = (
        Workspace(BaseTree.from_commits(history())),
        Workspace(BaseTree.from_commits(history())),
    )
    play(one)
    play(two)
    assert one.edits() == two.edits()
    assert one.log() == two.log()
    assert one.diff() == two.diff()
    assert one.blame(APP) == two.blame(APP)
    assert one.snapshot() == two.snapshot()
    one.reset()
    play(one)
    assert one.edits() == two.edits()


# --- load_history_dir -------------------------------------------------------------------------


def write(root: Path, relative: str, text: str | bytes) -> None:
    target = root / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        target.write_bytes(text)
    else:
        target.write_text(text, encoding="utf-8")


def meta(author: str, message: str, minutes_ago: float, extra: str = "") -> str:
    return f'author = "{author}"\nmessage = "{message}"\nminutes_ago = {minutes_ago}\n{extra}'


def test_load_history_dir(tmp_path: Path) -> None:
    write(tmp_path, "9-initial/commit.toml", meta("dana@ads-team", "initial", 2880))
    write(tmp_path, "9-initial/svc/ranker.py", "KEY = '{{key}}'\n")
    write(tmp_path, "9-initial/svc/deep/er/x.py", "x = 1\n")
    write(tmp_path, "9-initial/old.py", "old\n")
    write(tmp_path, "9-initial/__pycache__/junk.py", "junk\n")
    write(tmp_path, "9-initial/svc/__pycache__/ranker.cpython-311.pyc", b"\x00\xff")
    write(tmp_path, "9-initial/svc/stale.pyc", b"\x00\xff")
    write(
        tmp_path,
        "10-switch/commit.toml",
        meta("{{who}}", "use {{key}}", 14, 'deleted = ["old.py"]\n'),
    )
    write(tmp_path, "10-switch/svc/ranker.py", "KEY = '{{key}}_v2'\n")
    write(tmp_path, "README.md", "loose files beside the commits are ignored\n")

    def render(text: str) -> str:
        return text.replace("{{key}}", "score").replace("{{who}}", "lee@ads-team")

    commits = load_history_dir(tmp_path, render)
    assert [c.message for c in commits] == ["initial", "use score"]
    first, second = commits
    assert dict(first.changes) == {
        "old.py": "old\n",
        "svc/deep/er/x.py": "x = 1\n",
        "svc/ranker.py": "KEY = 'score'\n",
    }
    assert (second.author, second.minutes_ago, second.parent) == ("lee@ads-team", 14.0, first.sha)
    assert dict(second.changes) == {"old.py": None, "svc/ranker.py": "KEY = 'score_v2'\n"}
    tree = BaseTree.from_commits(commits)
    assert sorted(tree.files) == ["svc/deep/er/x.py", "svc/ranker.py"]
    assert load_history_dir(tmp_path, render) == commits


def test_load_history_dir_without_render_keeps_text(tmp_path: Path) -> None:
    write(tmp_path, "01-a/commit.toml", meta("d", "m", 1))
    write(tmp_path, "01-a/f.txt", "{{raw}}\r\n")
    (commit,) = load_history_dir(tmp_path)
    assert commit.changes["f.txt"] == "{{raw}}\r\n"


@pytest.mark.parametrize(
    ("files", "message"),
    [
        pytest.param({"01-a/f.py": "x"}, "has no commit.toml", id="no-meta"),
        pytest.param(
            {"first/commit.toml": meta("d", "m", 1)}, "not named 'NN-slug'", id="bad-name"
        ),
        pytest.param(
            {"01-a/commit.toml": meta("d", "m", 1), "1-b/commit.toml": meta("d", "m", 1)},
            "share the number 1",
            id="duplicate-number",
        ),
        pytest.param(
            {"01-a/commit.toml": meta("d", "m", 1, "minutes = 3\n")},
            "unknown keys",
            id="unknown-key",
        ),
        pytest.param(
            {"01-a/commit.toml": 'author = "d"\nmessage = "m"\n'}, "missing", id="missing-key"
        ),
        pytest.param(
            {"01-a/commit.toml": meta("d", "m", 1).replace("= 1", '= "1"')},
            "must be a number",
            id="bad-type",
        ),
        pytest.param(
            {"01-a/commit.toml": meta("d", "m", 1, "deleted = [1]\n")},
            "list of path strings",
            id="bad-deleted",
        ),
        pytest.param({"01-a/commit.toml": "author = \n"}, "not valid UTF-8 TOML", id="bad-toml"),
        pytest.param(
            {"01-a/commit.toml": meta("d", "m", 1), "01-a/f.bin": b"\xff\xfe"},
            "not UTF-8",
            id="binary-file",
        ),
        pytest.param(
            {"01-a/commit.toml": meta("d", "m", 1, 'deleted = ["f.py"]\n'), "01-a/f.py": "x"},
            "both listed in deleted",
            id="deleted-and-present",
        ),
        pytest.param(
            {"01-a/commit.toml": meta("d", "m", 1, 'deleted = ["../x"]\n')},
            "bad path in deleted",
            id="deleted-outside",
        ),
    ],
)
def test_load_history_dir_errors(
    tmp_path: Path, files: dict[str, str | bytes], message: str
) -> None:
    for relative, text in files.items():
        write(tmp_path, relative, text)
    with pytest.raises(HistoryError, match=re.escape(message)):
        load_history_dir(tmp_path)


def test_load_history_dir_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(HistoryError, match="does not exist"):
        load_history_dir(tmp_path / "nope")


def test_load_history_dir_refuses_symlinks(tmp_path: Path) -> None:
    write(tmp_path, "01-a/commit.toml", meta("d", "m", 1))
    outside = tmp_path.parent / f"{tmp_path.name}-secret.txt"
    outside.write_text("secret", encoding="utf-8")
    (tmp_path / "01-a" / "link.txt").symlink_to(outside)
    with pytest.raises(HistoryError, match="symlink"):
        load_history_dir(tmp_path)


def test_every_error_is_a_simulator_error() -> None:
    for error in (
        FileNotFoundInTreeError,
        HistoryError,
        InvalidEditError,
        LineRangeError,
        PathKindError,
        PathOutsideTreeError,
        ReadOnlyPathError,
    ):
        assert issubclass(error, SimulatorError)
        assert error.__doc__ is not None and error.__doc__.startswith("Raised when")


# --- property: edits keep every view of a file consistent -------------------------------------

LINES = st.lists(st.sampled_from(["a", "b", "c", "", "  d"]), min_size=0, max_size=4)


@settings(max_examples=300, deadline=None, database=None, derandomize=True)
@given(data=st.data(), initial=LINES, trailing=st.booleans())
def test_random_edits_stay_consistent(
    data: st.DataObject, initial: list[str], trailing: bool
) -> None:
    # A last empty line needs the final newline, or it would read back as no line at all.
    ends = bool(initial) and (trailing or initial[-1] == "")
    text = "\n".join(initial) + ("\n" if ends else "")
    tree = BaseTree.from_commits([make_commit(None, "base", "init", 10, {"f.txt": text})])
    ws = Workspace(tree)
    model = list(initial)
    for step in range(data.draw(st.integers(0, 6), label="steps")):
        total = len(model)
        actions = ["insert"] + (["replace", "delete"] if total else [])
        action = data.draw(st.sampled_from(actions), label="action")
        if action == "insert":
            start = data.draw(st.integers(1, total + 1), label="start")
            new = data.draw(LINES.filter(bool), label="new")
            end = None
            model[start - 1 : start - 1] = new
        else:
            start = data.draw(st.integers(1, total), label="start")
            end = data.draw(st.integers(start, total), label="end")
            new = data.draw(LINES, label="new") if action == "replace" else []
            model[start - 1 : end] = new
        eol = data.draw(st.sampled_from(["", "\n"]), label="eol")
        content = "\n".join(new) + ("\n" if new and new[-1] == "" else eol)
        record = ws.edit(
            "f.txt",
            action=action,  # type: ignore[arg-type]
            start_line=start,
            end_line=end,
            content=content if new else "",
            author=f"agent-{step % 2}",
            at_minute=step,
        )
        current = ws.read("f.txt")
        assert split_lines(current) == model
        view = ws.view("f.txt")
        blame = ws.blame("f.txt")
        assert view.lines == tuple(model)
        assert view.total_lines == len(model) == len(blame)
        assert [b.text for b in blame] == model
        assert [b.line for b in blame] == list(range(1, len(model) + 1))
        # The file keeps its starting newline convention; an empty file adopts "\n".
        if model:
            assert current.endswith("\n") == (ends or not text or model[-1] == "")
        shas = {c.sha for c in ws.log(limit=100)}
        assert {b.sha for b in blame} <= shas
        written = {b.line for b in blame if b.sha == record.commit_sha}
        assert written <= set(range(start, start + len(new)))
        if action == "insert":
            assert written == set(range(start, start + len(new)))
        assert (ws.changed_files() == {}) == (current == text)
