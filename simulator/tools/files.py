"""Tools over the code tree: list, view and edit files."""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from pydantic import ConfigDict, Field, model_validator
from pydantic.config import JsonDict

from ..errors import SimulatorError
from ..history import split_lines
from ..vfs import FileView
from .base import Args, Output, Patch, Refusal, Tool, ToolContext, ToolOutput

MAX_VIEW_LINES = 400


def world_error(exc: SimulatorError, code: str) -> ToolOutput:
    """An in-world refusal the agent reads, with a machine-readable code."""
    return ToolOutput(text=f"error: {exc}", data={"error": str(exc)}, error=code)


def file_error_code(exc: SimulatorError) -> str:
    """The in-world error code for a file-system error."""
    return {
        "PathOutsideTreeError": "path_outside_tree",
        "FileNotFoundInTreeError": "file_not_found",
        "PathKindError": "wrong_path_kind",
        "ReadOnlyPathError": "read_only",
        "LineRangeError": "bad_line_range",
        "InvalidEditError": "bad_edit",
    }.get(type(exc).__name__, "error")


class ListFilesArgs(Args):
    """Arguments of list_files."""

    path: str = Field("", max_length=512, description="Folder to list; '' for the tree's root.")


def list_files(ctx: ToolContext, args: ListFilesArgs) -> ToolOutput:
    """List a folder of the code tree."""
    try:
        entries = ctx.workspace.list_dir(args.path)
    except SimulatorError as exc:
        return world_error(exc, file_error_code(exc))
    where = args.path.strip("/") or "."
    return ToolOutput(
        text=f"{where}/\n" + "\n".join(f"  {e}" for e in entries),
        data={"path": args.path, "entries": entries},
    )


class ViewFileArgs(Args):
    """Arguments of view_file."""

    path: str = Field(max_length=512, description="File to read, e.g. 'ad_ranking/ranker.py'.")
    start_line: int | None = Field(None, ge=1, le=1_000_000, description="First line (1-based).")
    end_line: int | None = Field(None, ge=1, le=1_000_000, description="Last line, inclusive.")


def view_file(ctx: ToolContext, args: ViewFileArgs) -> ToolOutput:
    """Show a file with line numbers."""
    end = args.end_line
    if end is None and args.start_line is not None:
        end = args.start_line + MAX_VIEW_LINES - 1
    try:
        view = ctx.workspace.view(args.path, args.start_line, end)
        if args.start_line is None and args.end_line is None and view.total_lines > MAX_VIEW_LINES:
            view = ctx.workspace.view(args.path, 1, MAX_VIEW_LINES)
    except SimulatorError as exc:
        return world_error(exc, file_error_code(exc))
    return ToolOutput(
        text=_render(view),
        data={
            "path": view.path,
            "start_line": view.start_line,
            "end_line": view.end_line,
            "total_lines": view.total_lines,
            "lines": list(view.lines),
        },
    )


@lru_cache(maxsize=32)
def _render(view: FileView) -> str:
    # Agents re-read the files the evidence points at; numbering every line costs several times
    # the lookup (a view is its path, range and lines, so equal views render alike).
    return view.render()


_ONE_ANCHOR: JsonDict = {
    # Exactly one of start_line and find, said in the schema as the server checks it (a null
    # counts as absent). if/then/else, not oneOf: Anthropic's tool API refuses oneOf, anyOf and
    # allOf at an input schema's top level, for the whole request.
    "if": {"required": ["start_line"], "properties": {"start_line": {"type": "integer"}}},
    "then": {"not": {"required": ["find"], "properties": {"find": {"type": "string"}}}},
    "else": {"required": ["find"], "properties": {"find": {"type": "string"}}},
}


class EditLinesArgs(Args):
    """Arguments of edit_lines: exactly one of start_line and find places the range."""

    model_config = ConfigDict(json_schema_extra=_ONE_ANCHOR)

    path: str = Field(max_length=512, description="File to change (tests/ is read-only).")
    action: Literal["replace", "insert", "delete"] = Field(
        description="replace lines start..end with content; insert content before start_line "
        "(line count + 1 appends); delete lines start..end."
    )
    start_line: int | None = Field(
        None,
        ge=1,
        le=1_000_000,
        description="First line of the range (1-based). Give this or find, not both.",
    )
    find: str | None = Field(
        None,
        min_length=1,
        max_length=1000,
        description="Instead of start_line: text that appears on exactly one line of the file "
        "(copied from view_file); that line is the range's first, and its last unless "
        "end_line is given.",
    )
    end_line: int | None = Field(
        None, ge=1, le=1_000_000, description="Last line of the range, inclusive; default start."
    )
    content: str = Field(
        "", max_length=20_000, description="New lines (keep the file's indentation)."
    )

    @model_validator(mode="after")
    def _one_anchor(self) -> EditLinesArgs:
        if (self.start_line is None) == (self.find is None):
            raise ValueError("give start_line or find (exactly one of them)")
        return self


CONTEXT_LINES = 3
"""Unchanged lines an edit's result names on each side, for a replay to find it by content."""


def edit_lines(ctx: ToolContext, args: EditLinesArgs) -> ToolOutput:
    """Change a range of lines; the change is live on its service at once (a hotfix)."""
    try:
        start = args.start_line if args.find is None else _find(ctx, args.path, args.find)
        if isinstance(start, ToolOutput):
            return start
        assert start is not None  # the arguments give one of the two
        record = ctx.workspace.edit(
            args.path,
            action=args.action,
            start_line=start,
            end_line=args.end_line,
            content=args.content,
            author=ctx.agent_id,
            at_minute=ctx.clock,
        )
    except SimulatorError as exc:
        return world_error(exc, file_error_code(exc))
    syntax_error = None
    if record.path.endswith(".py"):
        try:
            compile(ctx.workspace.read(record.path), record.path, "exec", dont_inherit=True)
        except SyntaxError as exc:
            syntax_error = f"SyntaxError: {exc.msg} (line {exc.lineno})"
        except ValueError as exc:  # NUL bytes in source
            syntax_error = f"invalid source: {exc}"
    service = ctx.service_of_path(record.path)
    if service is not None:
        ctx.world.record_hotfix(service, ctx.clock, ctx.agent_id, record.path)
    removed, inserted = len(record.removed), len(record.inserted)
    # the unchanged lines around the edit, so a replay can find its place by content
    now = split_lines(ctx.workspace.read(record.path))
    top = record.start_line - 1
    above = now[max(0, top - CONTEXT_LINES) : top]
    below = now[top + inserted : top + inserted + CONTEXT_LINES]
    text = (
        f"edited {record.path}: {args.action} at line {record.start_line} "
        f"(-{removed} +{inserted} lines), commit {record.commit_sha}"
    )
    if service is not None:
        text += f"; live on {service}"
    if syntax_error:
        text += f"\nwarning: the file no longer compiles: {syntax_error}"
    return ToolOutput(
        text=text,
        data={
            "path": record.path,
            "commit": record.commit_sha,
            "start_line": record.start_line,
            "end_line": record.end_line,
            "removed": list(record.removed),
            "inserted": list(record.inserted),
            "context_above": above,
            "context_below": below,
            "service": service,
            "syntax_error": syntax_error,
        },
        syntax_error=syntax_error,
        patch=Patch(
            path=record.path,
            above=tuple(above),
            removed=tuple(record.removed),
            below=tuple(below),
            inserted=tuple(record.inserted),
            start=record.start_line,
        ),
    )


def _find(ctx: ToolContext, path: str, needle: str) -> int | ToolOutput:
    """The one line of `path` holding `needle`, or the refusal to edit a line it cannot be sure of.

    Raises:
        SimulatorError: the path is not a file of the tree.
    """
    found = ctx.workspace.lines_containing(path, needle)
    if len(found) == 1:
        return found[0]
    if not found:
        why = f"no line of {path} contains {needle!r}; view_file it and copy a line's text"
        return ToolOutput(
            text=f"error: {why}", data={"error": why, "lines": []}, error="find_not_found"
        )
    shown = ", ".join(map(str, found[:20])) + (", ..." if len(found) > 20 else "")
    why = (
        f"{len(found)} lines of {path} contain {needle!r} (lines {shown}); give a longer find "
        "that only one line has, or start_line"
    )
    return ToolOutput(
        text=f"error: {why}", data={"error": why, "lines": list(found)}, error="find_ambiguous"
    )


class FindRefusal(Refusal):
    """An edit_lines whose find matched no line, or several (their numbers)."""

    lines: list[int] = Field(description="The lines holding the find text (empty: none).")


class ListFilesOutput(Output):
    """What list_files returns."""

    path: str = Field(description="The folder listed, as asked.")
    entries: list[str] = Field(description="Its files and folders; folders end in '/'.")


class ViewFileOutput(Output):
    """What view_file returns."""

    path: str = Field(description="The file, normalised.")
    start_line: int = Field(description="The first line shown (1-based).")
    end_line: int = Field(description="The last line shown, inclusive.")
    total_lines: int = Field(description="The file's length in lines.")
    lines: list[str] = Field(description="The lines shown, without numbers.")


class EditLinesOutput(Output):
    """What edit_lines returns."""

    path: str = Field(description="The file changed, normalised.")
    commit: str = Field(description="The commit recording the edit (authored by the caller).")
    start_line: int = Field(description="The first line of the range changed.")
    end_line: int = Field(description="The last line of the range changed.")
    removed: list[str] = Field(description="The lines taken out.")
    inserted: list[str] = Field(description="The lines put in.")
    context_above: list[str] = Field(description="Up to 3 unchanged lines before the edit.")
    context_below: list[str] = Field(description="Up to 3 unchanged lines after the edit.")
    service: str | None = Field(description="The service the file's code runs in, if any.")
    syntax_error: str | None = Field(description="Why the file no longer compiles, if it does not.")


TOOLS = (
    Tool(
        "list_files",
        "List the files and folders of the services' code tree. Folders end in "
        "'/'. Start at '' (the root) to see every service's code and the tests/ folder.",
        ListFilesArgs,
        0.2,
        "investigate",
        list_files,
        output=ListFilesOutput,
        inline=True,
        needs=frozenset({"code"}),
    ),
    Tool(
        "view_file",
        "Read a file of the code tree with line numbers, whole or a line range. "
        "Use it on the files that stack traces, blame or the dependency graph point at.",
        ViewFileArgs,
        0.5,
        "investigate",
        view_file,
        output=ViewFileOutput,
        inline=True,
        needs=frozenset({"code"}),
    ),
    Tool(
        "edit_lines",
        "Replace, insert or delete a range of lines in a code file, located by line number "
        "or by a line's text (find). The edit goes "
        "live on its service at once (a hotfix) and is recorded as a commit by you. Tests under "
        "tests/ are read-only. Check the result with run_tests.",
        EditLinesArgs,
        1.0,
        "change",
        edit_lines,
        output=EditLinesOutput,
        refusals=(Refusal, FindRefusal),
        needs=frozenset({"code"}),
    ),
)
