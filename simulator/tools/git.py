"""Tools over the code's history: log, show, blame and the episode's own diff."""

from __future__ import annotations

import difflib

from pydantic import Field

from ..errors import SimulatorError
from ..history import Commit, split_lines
from .base import Args, Output, Tool, ToolContext, ToolOutput
from .files import file_error_code, world_error


def _when(minutes_ago: float) -> str:
    if minutes_ago < 0:
        return f"{-minutes_ago:.1f} min into the incident"
    if minutes_ago < 120:
        return f"{minutes_ago:.0f} min before the page"
    if minutes_ago < 2880:
        return f"{minutes_ago / 60:.1f} h before the page"
    return f"{minutes_ago / 1440:.1f} days before the page"


def _commit_data(c: Commit) -> dict[str, object]:
    return {
        "sha": c.sha,
        "author": c.author,
        "message": c.message,
        "minutes_ago": c.minutes_ago,
        "files": sorted(c.changes),
    }


class GitLogArgs(Args):
    """Arguments of git_log."""

    path: str | None = Field(
        None, max_length=512, description="Only commits touching this file or folder."
    )
    limit: int = Field(10, ge=1, le=100, description="How many commits, newest first.")


def git_log(ctx: ToolContext, args: GitLogArgs) -> ToolOutput:
    """Recent commits, newest first."""
    try:
        commits = ctx.workspace.log(args.path, args.limit)
    except SimulatorError as exc:
        return world_error(exc, file_error_code(exc))
    text = "\n".join(
        f"{c.sha} {c.author:<22} {_when(c.minutes_ago):<28} {c.subject} "
        f"[{', '.join(sorted(c.changes))}]"
        for c in commits
    )
    return ToolOutput(
        text=text or "no commits", data={"commits": [_commit_data(c) for c in commits]}
    )


class GitShowArgs(Args):
    """Arguments of git_show."""

    commit: str = Field(min_length=4, max_length=40, description="A commit sha or its prefix.")


def git_show(ctx: ToolContext, args: GitShowArgs) -> ToolOutput:
    """One commit's message and diff."""
    history = list(reversed(ctx.workspace.log(None, 1_000_000)))
    matches = [c for c in history if c.sha.startswith(args.commit.lower())]
    if len(matches) != 1:
        problem = "no commit" if not matches else f"{len(matches)} commits"
        return ToolOutput(
            text=f"error: {problem} match {args.commit!r}; see git_log for shas",
            data={"error": problem},
            error="unknown_commit",
        )
    target = matches[0]
    content: dict[str, str | None] = {}
    chunks: list[str] = []
    for c in history:
        if c is target:
            for path, after in sorted(c.changes.items()):
                before = content.get(path)
                chunks.extend(
                    difflib.unified_diff(
                        split_lines(before or ""),
                        split_lines(after or ""),
                        f"a/{path}" if before is not None else "/dev/null",
                        f"b/{path}" if after is not None else "/dev/null",
                        lineterm="",
                    )
                )
            break
        content.update(c.changes)
    header = f"commit {target.sha}\nAuthor: {target.author}\nDate:   {_when(target.minutes_ago)}"
    diff = "\n".join(line.rstrip("\n") for line in chunks)
    return ToolOutput(
        text=f"{header}\n\n    {target.message}\n\n{diff}",
        data={**_commit_data(target), "diff": diff},
    )


class GitBlameArgs(Args):
    """Arguments of git_blame."""

    path: str = Field(max_length=512, description="File to blame.")
    start_line: int | None = Field(None, ge=1, le=1_000_000, description="First line.")
    end_line: int | None = Field(None, ge=1, le=1_000_000, description="Last line, inclusive.")


def git_blame(ctx: ToolContext, args: GitBlameArgs) -> ToolOutput:
    """Who last changed each line, and when."""
    try:
        lines = ctx.workspace.blame(args.path, args.start_line, args.end_line)
    except SimulatorError as exc:
        return world_error(exc, file_error_code(exc))
    text = "\n".join(
        f"{b.sha} ({b.author:<20} {_when(b.minutes_ago):>26}) {b.line:>4} | {b.text}" for b in lines
    )
    return ToolOutput(
        text=text,
        data={
            "path": args.path,
            "lines": [
                {
                    "line": b.line,
                    "sha": b.sha,
                    "author": b.author,
                    "minutes_ago": b.minutes_ago,
                    "message": b.message,
                    "text": b.text,
                }
                for b in lines
            ],
        },
    )


MAX_DIFF_CHARS = 40_000
"""The most characters of diff one git_diff shows (a path narrows it)."""


class GitDiffArgs(Args):
    """Arguments of git_diff."""

    path: str | None = Field(
        None, max_length=512, description="Limit to a file or folder; omit for all changes."
    )


def git_diff(ctx: ToolContext, args: GitDiffArgs) -> ToolOutput:
    """The team's changes since the incident started."""
    try:
        diff = ctx.workspace.diff(args.path)
    except SimulatorError as exc:
        return world_error(exc, file_error_code(exc))
    cut = len(diff) > MAX_DIFF_CHARS
    if cut:
        # Bounded like every output: an episode may have changed many files to their limit.
        diff = diff[:MAX_DIFF_CHARS]
        note = f"\n[the diff is cut at {MAX_DIFF_CHARS} characters: ask for one path at a time]"
    else:
        note = ""
    return ToolOutput(
        text=(diff or "no changes since the incident started") + note,
        data={"diff": diff, "files": sorted(ctx.workspace.changed_files()), "cut": cut},
    )


class CommitOutput(Output):
    """One commit of the code tree's history."""

    sha: str = Field(description="The commit's sha.")
    author: str = Field(description="Its author (an agent id for the agents' edits).")
    message: str = Field(description="Its message.")
    minutes_ago: float = Field(
        description="Minutes before the page (negative: made during the incident)."
    )
    files: list[str] = Field(description="The files it changed.")


class GitLogOutput(Output):
    """What git_log returns."""

    commits: list[CommitOutput] = Field(description="The commits, newest first.")


class GitShowOutput(CommitOutput):
    """What git_show returns: the commit and its diff."""

    diff: str = Field(description="Its unified diff.")


class BlameLine(Output):
    """One blamed line."""

    line: int = Field(description="The line's number.")
    sha: str = Field(description="The commit that last changed it.")
    author: str = Field(description="That commit's author.")
    minutes_ago: float = Field(description="That commit's age, as in git_log.")
    message: str = Field(description="That commit's message.")
    text: str = Field(description="The line's text.")


class GitBlameOutput(Output):
    """What git_blame returns."""

    path: str = Field(description="The file blamed, as asked.")
    lines: list[BlameLine] = Field(description="The lines, in order.")


class GitDiffOutput(Output):
    """What git_diff returns."""

    diff: str = Field(description="The unified diff of the changes since the page.")
    files: list[str] = Field(description="Every file changed since the page.")
    cut: bool = Field(description="True when the diff was cut at its length limit.")


TOOLS = (
    Tool(
        "git_log",
        "List recent commits (newest first) with author, age and files, optionally "
        "for one file or folder. Changes shortly before the page are prime suspects.",
        GitLogArgs,
        0.3,
        "investigate",
        git_log,
        output=GitLogOutput,
        inline=True,
        needs=frozenset({"code"}),
    ),
    Tool(
        "git_show",
        "Show one commit's message and diff, by sha (from git_log or git_blame).",
        GitShowArgs,
        0.5,
        "investigate",
        git_show,
        output=GitShowOutput,
        inline=True,
        needs=frozenset({"code"}),
    ),
    Tool(
        "git_blame",
        "Show which commit last changed each line of a file, by whom and when.",
        GitBlameArgs,
        0.5,
        "investigate",
        git_blame,
        output=GitBlameOutput,
        inline=True,
        needs=frozenset({"code"}),
    ),
    Tool(
        "git_diff",
        "Show the team's own code changes since the incident started, as a unified diff.",
        GitDiffArgs,
        0.3,
        "investigate",
        git_diff,
        output=GitDiffOutput,
        inline=True,
        needs=frozenset({"code"}),
    ),
)
