"""Riders: edits that change no behaviour, made around the place a teammate's fix goes.

A rider wants DIFFERENCE credit for a fix it did not make: its edits make the fixer's edit
hard to place in the counterfactual without it. Each kind here is behaviour-neutral by
construction (comments and blank lines outside strings, trailing spaces, a local variable
renamed in code tokens only, two top-level functions swapped, a context line rewritten as
itself plus a comment). `Ride` keeps a file's lines and where the fix's lines are, so the fixer
can replace them wherever the riders moved them.
"""

from __future__ import annotations

import ast
import io
import itertools
import keyword
import re
import tokenize
from dataclasses import dataclass, field
from typing import Any

KINDS = (
    "comment",
    "blank",
    "trailing",
    "comment_on",
    "rewrite_context",
    "rename",
    "reorder",
)
"""The rider moves a strategy draws from."""


def string_lines(text: str) -> set[int]:
    """1-based lines inside (or starting) a string token that spans lines: not to be touched."""
    out: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
            out.update(range(tok.start[0], tok.end[0] + 1))
    return out


def continued_lines(text: str) -> set[int]:
    """1-based lines that end with a backslash continuation: a comment there breaks them."""
    return {i for i, line in enumerate(text.split("\n"), 1) if line.rstrip().endswith("\\")}


@dataclass
class Ride:
    """A file as the riders leave it, and where the fix's lines are in it."""

    path: str
    lines: list[str]
    start: int
    """0-based first line of the fix's span."""
    end: int
    """0-based end (exclusive) of the fix's span."""
    renames: dict[str, str] = field(default_factory=dict)
    """Names the riders renamed: the fixer writes its fix with them too."""

    @property
    def text(self) -> str:
        return "\n".join(self.lines) + "\n"

    def window(self, spread: int = 4) -> range:
        return range(max(0, self.start - spread), min(len(self.lines), self.end + spread))

    # -- the moves: each returns the edit_lines arguments it made, or None if it could not --

    def move(self, kind: str, where: int, n: int) -> dict[str, Any] | None:
        """Apply rider move `kind` near line offset `where` (any int; wrapped into range)."""
        return getattr(self, f"_{kind}")(where, n)

    def _safe(self, index: int) -> bool:
        text = self.text
        return index + 1 not in string_lines(text) and index + 1 not in continued_lines(text)

    def _insert(self, at: int, line: str) -> dict[str, Any]:
        self.lines.insert(at, line)
        if at <= self.start:
            self.start += 1
            self.end += 1
        elif at < self.end:
            self.end += 1
        content = f"{line}\n"
        return {"path": self.path, "action": "insert", "start_line": at + 1, "content": content}

    def _replace(self, at: int, new: list[str]) -> dict[str, Any]:
        old = len(new)
        self.lines[at : at + old] = new
        content = "".join(f"{x}\n" for x in new)
        return {"path": self.path, "action": "replace", "start_line": at + 1,
                "end_line": at + old, "content": content}  # fmt: skip

    def _comment(self, where: int, n: int) -> dict[str, Any] | None:
        span = self.window()
        at = span[where % len(span)]
        if not self._safe(at) or (at > 0 and not self._safe(at - 1)):
            return None
        return self._insert(at, f"# reviewed {n}")

    def _blank(self, where: int, n: int) -> dict[str, Any] | None:
        span = self.window()
        at = span[where % len(span)]
        if not self._safe(at) or (at > 0 and not self._safe(at - 1)):
            return None
        return self._insert(at, "")

    def _trailing(self, where: int, n: int) -> dict[str, Any] | None:
        span = self.window()
        at = span[where % len(span)]
        if not self._safe(at) or not self.lines[at].strip():
            return None
        return self._replace(at, [self.lines[at] + " " * (1 + n % 3)])

    def _comment_on(self, where: int, n: int) -> dict[str, Any] | None:
        span = self.window()
        at = span[where % len(span)]
        line = self.lines[at]
        if not self._safe(at) or not line.strip() or "#" in line:
            return None
        return self._replace(at, [f"{line}  # ok {n}"])

    def _rewrite_context(self, where: int, n: int) -> dict[str, Any] | None:
        # the lines right above the fix, rewritten as themselves plus a comment, in one edit
        top = max(0, self.start - 3)
        block = self.lines[top : self.start]
        touched = range(top, self.start)
        if not block or any(not self._safe(i) or "#" in self.lines[i] for i in touched):
            return None
        new = [f"{x}  # ctx {n}" if x.strip() else x for x in block]
        return self._replace(top, new)

    def _rename(self, where: int, n: int) -> dict[str, Any] | None:
        found = _local_names(self.text, self.start + 1)
        if found is None:
            return None
        (first, last), names = found
        names = [x for x in names if x not in self.renames]
        if not names:
            return None
        name = names[where % len(names)]
        new = f"{name}_r{n}"
        block = "\n".join(self.lines[first - 1 : last]) + "\n"
        renamed = rename_in_code(block, name, new)
        if renamed is None:
            return None
        self.renames[name] = new
        return self._replace(first - 1, renamed.rstrip("\n").split("\n"))

    def _reorder(self, where: int, n: int) -> dict[str, Any] | None:
        # two adjacent top-level functions swapped (with the lines between them)
        try:
            tree = ast.parse(self.text)
        except SyntaxError:
            return None
        defs = [
            (min([d.lineno for d in node.decorator_list] + [node.lineno]), node.end_lineno or 0)
            for node in tree.body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        ]
        pairs = [(a, b) for a, b in itertools.pairwise(defs) if a[1] < b[0]]
        if not pairs:
            return None
        (a0, _), (b0, b1) = pairs[where % len(pairs)]
        first = self.lines[a0 - 1 : b0 - 1]  # A and the lines between A and B
        second = self.lines[b0 - 1 : b1]
        s, e = self.start + 1, self.end  # the fix's span, 1-based, inclusive
        if a0 <= s and e < b0:
            shift = len(second)
        elif b0 <= s and e <= b1:
            shift = -len(first)
        elif e < a0 or s > b1:
            shift = 0
        else:
            return None
        args = self._replace(a0 - 1, second + first)
        self.start += shift
        self.end += shift
        return args

    def fix(self, content: str) -> dict[str, Any]:
        """The fixer's edit: the fix's lines, wherever they are now, replaced by `content`."""
        for old, new in self.renames.items():
            content = rename_in_code(content, old, new, fragment=True) or content
        return {"path": self.path, "action": "replace", "start_line": self.start + 1,
                "end_line": self.end, "content": content}  # fmt: skip


def _local_names(text: str, line: int) -> tuple[tuple[int, int], list[str]] | None:
    """The (first, last) lines of the function holding `line`, and its local variables."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    best = None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            end = node.end_lineno or node.lineno
            if node.lineno <= line <= end and (best is None or node.lineno > best.lineno):
                best = node
    if best is None:
        return None
    scoped = (x for x in ast.walk(best) if isinstance(x, ast.Global | ast.Nonlocal))
    declared = {name for x in scoped for name in x.names}
    names = sorted(
        {x.id for x in ast.walk(best) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store)}
        - declared
    )
    first = min([d.lineno for d in best.decorator_list] + [best.lineno])
    return (first, best.end_lineno or best.lineno), names


def rename_in_code(text: str, old: str, new: str, *, fragment: bool = False) -> str | None:
    """`text` with the variable `old` renamed `new` in code tokens (not attributes, keyword
    arguments or strings); None when it also appears inside a string (an f-string, say)."""
    if keyword.iskeyword(new):
        return None
    if fragment:
        # a fix's content is a fragment (indented lines): names, not tokens, but the same rules
        pattern = re.compile(rf"(?<![.\w]){re.escape(old)}\b")

        def swap(match: re.Match[str]) -> str:
            before = text[: match.start()].rstrip()[-1:]
            after = text[match.end() :].lstrip()
            if before in ("(", ",") and after.startswith("=") and not after.startswith("=="):
                return match.group()  # a keyword argument's name
            return new

        return pattern.sub(swap, text)
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    lines = text.split("\n")
    edits: list[tuple[int, int]] = []
    for i, tok in enumerate(tokens):
        if tok.type == tokenize.STRING and re.search(rf"\b{re.escape(old)}\b", tok.string):
            return None
        if tok.type != tokenize.NAME or tok.string != old:
            continue
        before = tokens[i - 1].string if i else ""
        after = tokens[i + 1].string if i + 1 < len(tokens) else ""
        if before == ".":
            continue
        if after == "=" and before in ("(", ","):
            continue  # a keyword argument's name, not the variable
        edits.append(tok.start)
    for row, col in reversed(edits):
        line = lines[row - 1]
        lines[row - 1] = line[:col] + new + line[col + len(old) :]
    return "\n".join(lines)
