"""The machinery the families' axes modules share: TOML writing, runs of the code, the engine.

Every family's axes are written by its module in `tools/families/axes/`, so that every table
follows from data and from runs of the code instead of being edited by hand. This module is
their one copy of the machinery; what stays in a family's module is the family's own data and
how a table follows from it. It is an authoring tool: the runtime package never imports it.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

__all__ = [
    "AXES_MARK",
    "BARE_DASHED_KEYS",
    "HEAD",
    "PLAIN",
    "ROOT",
    "SCENARIOS",
    "TOPOLOGIES",
    "CodeSites",
    "Effects",
    "LogBlock",
    "TomlStyle",
    "banner",
    "deployed_check",
    "engine_checked_axis",
    "engine_checks",
    "fault_axis",
    "healthy_check",
    "log",
    "probe_names",
    "prose_list",
    "run_json",
    "scenario_text",
    "toml_key",
    "toml_table",
    "toml_tables",
    "toml_value",
    "wrong_fix",
]

# --- TOML -----------------------------------------------------------------------------------

_BARE = re.compile(r"[A-Za-z0-9_]+")
_BARE_WITH_DASHES = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True, slots=True)
class TomlStyle:
    """How a generator lays out what TOML leaves open (the parsed values are the same).

    The committed scenario.toml files differ in these choices; a style keeps each byte-stable.
    """

    quote_dashed_keys: bool = True
    """Quote keys with a `-` (`"api-gateway" = 1`); False writes them bare (`api-gateway = 1`)."""

    wrap_string_lists_over: int | None = None
    """Write a list of strings longer than this many characters in all one item a line."""


PLAIN = TomlStyle()
"""The style most generators write in."""

BARE_DASHED_KEYS = TomlStyle(quote_dashed_keys=False)
"""Keys with a `-` bare (`api-gateway = ...`): the courier platform's and the shop's generators."""


def toml_key(key: str, style: TomlStyle = PLAIN) -> str:
    """`key` bare when TOML allows it (and the style wants it), else quoted."""
    bare = _BARE if style.quote_dashed_keys else _BARE_WITH_DASHES
    return key if bare.fullmatch(key) else json.dumps(key, ensure_ascii=False)


def toml_value(value: Any, style: TomlStyle = PLAIN) -> str:
    """`value` (bool, int, float, str, list, tuple or dict) as one inline TOML value.

    Raises:
        TypeError: when `value`, or something in it, has no TOML form.
    """
    if isinstance(value, bool):  # before int: a bool is an int
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        # JSON's string escapes are TOML's basic-string escapes.
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        limit = style.wrap_string_lists_over
        if (
            limit is not None
            and value
            and all(isinstance(v, str) for v in value)
            and sum(map(len, value)) > limit
        ):
            return "[\n" + "".join(f"  {toml_value(v, style)},\n" for v in value) + "]"
        return "[" + ", ".join(toml_value(v, style) for v in value) + "]"
    if isinstance(value, dict):
        items = (f"{toml_key(k, style)} = {toml_value(v, style)}" for k, v in value.items())
        return "{ " + ", ".join(items) + " }"
    raise TypeError(f"no TOML form for {type(value).__name__}: {value!r}")


def toml_table(header: str, data: Mapping[str, Any], style: TomlStyle = PLAIN) -> str:
    """`header` (`[[name]]` or `[name]`) and then `data`'s keys, one a line, each ending a line."""
    lines = [header, *(f"{toml_key(k, style)} = {toml_value(v, style)}" for k, v in data.items())]
    return "\n".join(lines) + "\n"


def toml_tables(header: str, tables: Iterable[Mapping[str, Any]], style: TomlStyle = PLAIN) -> str:
    """One `header` table per item of `tables`, a blank line between two."""
    return "\n".join(toml_table(header, t, style) for t in tables)


# --- parts of a fault table ----------------------------------------------------------------


class LogBlock(TypedDict):
    """Log lines one service writes at one level (an item of a table's `logs`)."""

    service: str
    level: str
    lines: list[str]


def log(service: str, level: str, *lines: str) -> LogBlock:
    """The log lines `service` writes at `level`: one item of a table's `logs`."""
    return {"service": service, "level": level, "lines": list(lines)}


Effects = dict[str, dict[str, float]]
"""Per service, the metrics the fault moves and their values (a table's `effects`)."""


def prose_list(names: Sequence[str], none: str) -> str:
    """`names` as prose (`a`, `a and b`, `a, b and c`); `none` when there are none."""
    if not names:
        return none
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def healthy_check(service: str) -> dict[str, Any]:
    """The state check that `service` is healthy when the episode ends."""
    return {"name": f"{service} healthy", "kind": "healthy", "service": service}


def deployed_check(service: str, version: str) -> dict[str, Any]:
    """The state check that `service` runs `version` (back on its good release) at the end."""
    return {
        "name": f"{service} back on {version}",
        "kind": "deployed_version",
        "service": service,
        "version": version,
    }


def wrong_fix(
    tool: str, args: dict[str, Any], service: str, category: str, summary: str
) -> list[dict[str, Any]]:
    """A table's plausible wrong fix: `tool` called with `args`, then a report blaming `service`.

    The report names `tool` as the remediation, as an agent that believed the fix would.
    """
    report = {
        "root_cause_service": service,
        "root_cause_location": f"service:{service}",
        "category": category,
        "remediation": tool,
        "summary": summary,
    }
    return [{"tool": tool, "args": args}, {"tool": "submit_report", "args": report}]


# --- where the families live ---------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
"""The repository's root."""

SCENARIOS = ROOT / "simulator" / "scenarios"
"""The families' folders (`simulator/scenarios/<family>/`)."""

TOPOLOGIES = SCENARIOS / "_topologies"
"""The shared platforms' folders."""


HEAD = "head.toml"
"""A family's hand-written part of scenario.toml, in its folder."""

AXES_MARK = "# ---- the axes: written by tools/families/axes/{family}.py ----\n"
"""The line between the head and the axes in scenario.toml."""


def banner(family: str) -> str:
    """The first lines of a generated scenario.toml: where to edit and how to regenerate."""
    return (
        f"# GENERATED by `python -m tools.families regenerate {family}` from head.toml (written\n"
        f"# by hand) and tools/families/axes/{family}.py (the axes): edit those, not this file.\n\n"
    )


def scenario_text(family: str, axes: str) -> str:
    """The whole scenario.toml of `family`: the banner, its head.toml, the mark, then `axes`."""
    head = (SCENARIOS / family / HEAD).read_text(encoding="utf-8")
    mark = AXES_MARK.format(family=family)
    return banner(family) + head.rstrip("\n") + "\n\n" + mark + "\n" + axes.rstrip("\n") + "\n"


def fault_axis(tables: Iterable[Mapping[str, Any]], style: TomlStyle = PLAIN) -> str:
    """The main axis: one `[[variants.fault]]` table per item of `tables`."""
    return toml_tables("[[variants.fault]]", tables, style)


# --- running the family's code --------------------------------------------------------------


def run_json(script: str, *args: str, timeout: float = 300) -> Any:
    """Run `script` in a fresh interpreter with `args`; the JSON its last line of output prints.

    A fresh interpreter per run, so that no module the code under test imports leaks between
    the healthy and the broken tree.
    """
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def probe_names(probes: Path) -> list[str]:
    """The public functions of a hidden probes file, in the file's order."""
    tree = ast.parse(probes.read_text(encoding="utf-8"))
    return [
        n.name
        for n in tree.body
        if isinstance(n, ast.AsyncFunctionDef | ast.FunctionDef) and not n.name.startswith("_")
    ]


def engine_checks(folder: Path, structures: int) -> dict[str, list[str]]:
    """Per table key of the family in `folder`'s main axis, the checks that fail at the start.

    Plays seeds from 0 until `structures` distinct keys were met, and keeps the names (after
    `::`) of the code checks whose observation differs between the start and the reference.
    The family is read from `folder` (a scratch copy, so that the committed files are never
    rewritten), with a catalogue of its own, so that no judge's memo of another run is used.
    """
    # Imported here: the engine is the axes' subject, and only this helper needs it.
    from metasre.simulator import Episode
    from metasre.simulator.catalog import Catalog
    from metasre.simulator.scenarios.loader import load_instance

    catalog = Catalog()
    found: dict[str, list[str]] = {}
    seed = 0
    while len(found) < structures:
        episode = Episode(load_instance(folder, seed), catalog=catalog)
        key = episode.instance.values["fault"]["key"]
        if key not in found:
            verdict = episode.code_checks()
            found[key] = [c.partition("::")[2] for c, same in verdict.items() if not same]
        seed += 1
    return found


def engine_checked_axis(
    family: str,
    keys: list[str],
    tables: Callable[[dict[str, list[str]]], list[dict[str, Any]]],
    what: str,
) -> str:
    """The main axis, with each table's hidden checks as the engine computes them.

    First every probe of hidden/probes.py is FAIL_TO_PASS for every key, in a scratch copy of
    the family, so that the engine reports, per key, which probes observe the same at the start
    as on the reference (those become PASS_TO_PASS); then the tables are written with the
    checks it found.

    Args:
        family: the family's folder name.
        keys: the main axis's table keys, in order.
        tables: the tables, given each key's FAIL_TO_PASS probe names.
        what: what a table is a case of, for the error when no probe sees one.
    """
    here = SCENARIOS / family
    every = probe_names(here / "hidden" / "probes.py")
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp) / family
        shutil.copytree(here, scratch, ignore=shutil.ignore_patterns("__pycache__"))
        draft = fault_axis(tables(dict.fromkeys(keys, every))) + "\n"
        (scratch / "scenario.toml").write_text(scenario_text(family, draft), encoding="utf-8")
        checks = engine_checks(scratch, len(keys))
    for key, failing in checks.items():
        if not failing:
            raise SystemExit(f"{family}: {key}: no probe sees this {what}")
    return fault_axis(tables(checks)) + "\n"


_PROBE_RUNNER = """
import asyncio, importlib.util, inspect, json, sys
sys.path.insert(0, sys.argv[1])
spec = importlib.util.spec_from_file_location("probes", sys.argv[2])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
out = {}
for name, fn in vars(module).items():
    if name.startswith("_") or not inspect.isfunction(fn) or fn.__module__ != "probes":
        continue
    try:
        value = fn()
        if inspect.isawaitable(value):
            value = asyncio.run(value)
    except Exception as exc:
        value = {"raised": type(exc).__name__}
    out[name] = value
print(json.dumps(out, sort_keys=True, default=repr))
"""

_TRIGGER_RUNNER = """
import json, os, sys, traceback
root = sys.argv[1]
sys.path.insert(0, root)
try:
    exec(sys.argv[2], {})
    print(json.dumps({"ok": True}))
except Exception as exc:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(root)]
    print(json.dumps({"ok": False, "error": f"{type(exc).__name__}: {exc}", "frames": [
        [os.path.relpath(f.filename, root), f.lineno, f.name, f.line] for f in frames]}))
"""


@dataclass(frozen=True)
class CodeSites:
    """A family whose main axis is sites: lines of healthy code and the bad commit's form of each.

    A site is a dict with at least `key`, `file`, `find` (the healthy text, once in the file) and
    `bug` (what the bad commit puts there; "" removes the text); with `trigger`, the name of a
    request in `triggers` that reaches it. Its table is completed from runs of the code: the
    request's traceback on the broken tree becomes the logged stack trace (and the difficulty),
    every hidden probe runs on both trees and those that differ become FAIL_TO_PASS (the
    `*_unchanged` probes must not), and the reference fix is the edit proven to restore the file.
    """

    here: Path
    """The family's folder (scenario.toml, history/, hidden/probes.py)."""

    topology: Path
    """The topology's history folder, which the family's history continues."""

    derived: Callable[[dict[str, Any]], dict[str, Any]]
    """What else a completed table says (effects, alert, subject), from the table so far."""

    triggers: Mapping[str, str] = field(default_factory=dict)
    """Python source of each request that reaches a site, run with the tree on sys.path."""

    probe_values: Mapping[str, str] = field(default_factory=dict)
    """Templates of hidden/probes.py other than `{{fault.fail_to_pass}}`, and their values."""

    bug_commit: str = "09-the-change"
    """The family's history commit that carries the bad change; those before it are healthy."""

    def healthy_tree(self, into: Path) -> dict[str, str]:
        """Write the code before the bad commit under `into`; its files by path."""
        from metasre.simulator.history import load_history_dir

        files: dict[str, str] = {}
        parent = load_history_dir(self.topology, lambda text: text, files)[-1].sha
        with tempfile.TemporaryDirectory() as tmp:
            for commit in sorted((self.here / "history").iterdir()):
                if commit.name < self.bug_commit:
                    shutil.copytree(commit, Path(tmp) / commit.name)
            load_history_dir(Path(tmp), lambda text: text, files, parent)
        for path, text in files.items():
            (into / path).parent.mkdir(parents=True, exist_ok=True)
            (into / path).write_text(text)
        return files

    def observe(self, tree: Path, broken: list[str]) -> dict[str, Any]:
        """Every probe's observation on `tree`, with the hidden file rendered for `broken`."""
        text = (self.here / "hidden" / "probes.py").read_text()
        text = text.replace("{{fault.fail_to_pass}}", repr(broken))
        for name, value in self.probe_values.items():
            text = text.replace("{{" + name + "}}", value)
        rendered = tree.parent / f"probes_{tree.name}.py"
        rendered.write_text(text)
        observed: dict[str, Any] = run_json(_PROBE_RUNNER, str(tree), str(rendered))
        return observed

    def site(
        self, fault: dict[str, Any], healthy: Path, buggy: Path, baseline: dict[str, Any]
    ) -> dict[str, Any]:
        """One fault table, completed from runs of the healthy and the broken code."""
        key, path = fault["key"], fault["file"]
        text = (healthy / path).read_text()
        if text.count(fault["find"]) != 1:
            raise SystemExit(f"{key}: the text to break must occur once in {path}")
        broken_text = text.replace(fault["find"], fault["bug"])
        shutil.rmtree(buggy, ignore_errors=True)
        shutil.copytree(healthy, buggy)
        (buggy / path).write_text(broken_text)
        line = text[: text.index(fault["find"])].count("\n") + 1
        fix = _reference_fix(key, path, fault["find"], fault["bug"], text, broken_text, line)
        table = {k: v for k, v in fault.items() if k != "trigger"}
        if "trigger" in fault:
            table.update(self._evidence(fault, healthy, buggy, line))
        seen = self.observe(buggy, [])
        f2p = sorted(k for k in baseline if baseline[k] != seen[k] and not k.endswith("_unchanged"))
        if not f2p:
            raise SystemExit(f"{key}: no probe observes the broken site")
        for k in f2p:
            if isinstance(baseline[k], dict) and set(baseline[k]) <= {"raised"}:
                raise SystemExit(f"{key}: probe {k} observes only an exception type")
        f2p = [f"hidden/probes.py::{k}" for k in f2p]
        still = self.observe(buggy, f2p)

        def kept(observed: Any) -> Any:
            # the grader leaves out the seed's FAIL_TO_PASS entries (hidden._without_broken)
            if not isinstance(observed, dict):
                return observed
            return {n: o for n, o in observed.items() if f"hidden/probes.py::{n}" not in f2p}

        for k, v in self.observe(healthy, f2p).items():
            if k.endswith("_unchanged") and kept(still[k]) != kept(v):
                raise SystemExit(f"{key}: {k} differs on the broken code")
        code = fault["bug"].strip() or (
            "the lines `"
            + " / ".join(s.strip() for s in fault["find"].strip().splitlines())
            + "` removed"
        )
        table.update(code=code, line=line, lines=[line, line], fail_to_pass=f2p, fix=fix)
        table.update(self.derived(table))
        return table

    def _evidence(
        self, fault: dict[str, Any], healthy: Path, buggy: Path, line: int
    ) -> dict[str, Any]:
        """The stack trace the broken site logs, from running the request that reaches it."""
        code = self.triggers[fault["trigger"]]
        if not run_json(_TRIGGER_RUNNER, str(healthy), code)["ok"]:
            raise SystemExit(f"{fault['key']}: its request fails on the healthy code")
        crash = run_json(_TRIGGER_RUNNER, str(buggy), code)
        if crash["ok"]:
            raise SystemExit(f"{fault['key']}: its request does not reach the broken site")
        # Production tracebacks name files by their path in the container (/app/...).
        trace = ["Traceback (most recent call last):"]
        for path, number, function, text in crash["frames"]:
            trace += [f'  File "/app/{path}", line {number}, in {function}', f"    {text}"]
        trace.append(crash["error"])
        innermost = crash["frames"][-1]
        difficulty = "easy" if (innermost[0], innermost[1]) == (fault["file"], line) else "medium"
        return {"error": crash["error"], "trace": trace, "difficulty": difficulty}

    def tables(self, faults: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Every site's completed table, in order."""
        with tempfile.TemporaryDirectory() as tmp:
            healthy, buggy = Path(tmp) / "healthy", Path(tmp) / "buggy"
            self.healthy_tree(healthy)
            baseline = self.observe(healthy, [])
            tables = [self.site(fault, healthy, buggy, baseline) for fault in faults]
        keys = [t["key"] for t in tables]
        if len(set(keys)) != len(keys):
            raise SystemExit("fault keys must be unique")
        return tables

    def axis(self, faults: list[dict[str, Any]]) -> str:
        """Every site's completed table as the main axis, each followed by a blank line."""
        return fault_axis(self.tables(faults)) + "\n"


def _reference_fix(
    key: str, path: str, find: str, bug: str, text: str, broken_text: str, line: int
) -> dict[str, Any]:
    """The edit that puts `find` back where `bug` stands, proven to restore `text` exactly."""
    fix: dict[str, Any]
    if bug:
        fix = {
            "path": path,
            "action": "replace",
            "start_line": line,
            "end_line": line,
            "content": find.rstrip("\n"),
        }
    else:  # the commit removed lines: put them back before the line now in their place
        fix = {"path": path, "action": "insert", "start_line": line, "content": find.rstrip("\n")}
    lines = broken_text.splitlines()
    restored = (
        lines[: line - 1]
        + fix["content"].splitlines()
        + lines[line - (fix["action"] == "insert") :]
    )
    if "\n".join(restored) + "\n" != text:
        raise SystemExit(f"{key}: the reference fix does not restore {path}")
    return fix
