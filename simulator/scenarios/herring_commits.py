"""Commits other teams landed around a code fault: "revert the newest commit" is not a fix.

A family whose bug arrives in a commit is solved without reading anything by undoing the
newest commit (`metasre validate`'s revert scripts measured 0.8-1.0 on every code-fix family).
In a real repository the culprit is one commit among others that landed around it, and undoing
a colleague's shipped work is damage, not remediation. So a symptom-first family with
`[herrings] commits` adds, per seed, `commit_count` harmless commits drawn alternately on a
service the page points at (the root as likely as each symptom) and on another, dated around
the culprit (how many land after it drawn uniformly, so no rank names it), each
appending a small piece of shipped work (a setting other code reads) to one of the service's
modules; and one grader check per commit (`hidden/herrings.py`, PASS_TO_PASS) that the work is
still there when the incident is over. Appended at a file's end, a herring moves no line the
cause's own fix or checks name.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from ..history import Commit, make_commit
from ..vfs import BaseTree
from .spec import ScenarioSpec

HERRINGS_FILE = "hidden/herrings.py"
"""The grader's checks that the herring commits' work is still in place."""

_TICKET = re.compile(r"\(([A-Z]{2,6})-\d+\)")


def _package(service: str) -> str:
    return service.replace("-", "_")


def _modules(tree: BaseTree, service: str, readonly: Sequence[str]) -> list[str]:
    """The service's Python modules an agent could edit, sorted."""
    head = f"{_package(service)}/"
    return sorted(
        p
        for p in tree.files
        if p.startswith(head) and p.endswith(".py") and not p.startswith(tuple(readonly))
    )


def _team(commits: Sequence[Commit], service: str) -> tuple[list[str], str]:
    """Who commits to a service's package, and their tickets' prefix."""
    head = f"{_package(service)}/"
    mine = [c for c in commits if any(p.startswith(head) for p in c.changes)]
    authors = sorted({c.author for c in mine or commits})
    tickets = [m.group(1) for c in mine or commits if (m := _TICKET.search(c.message))]
    # A service nobody committed to yet takes the repository's commonest people and tickets.
    return authors, max(sorted(set(tickets)), key=tickets.count) if tickets else "OPS"


def add_herring_commits(
    spec: ScenarioSpec,
    tree: BaseTree,
    hidden_files: Mapping[str, bytes],
    work: Sequence[tuple[str, str, str]],
    count: int,
    rng: random.Random,
    messages: Mapping[str, Sequence[str]] = MappingProxyType({}),
) -> tuple[BaseTree, MappingProxyType[str, bytes], dict[str, Any]]:
    """`tree` with `count` harmless commits woven into its history, and what goes with them.

    Returns the new tree, the hidden files with the checks that the commits' work stays, and
    the spec fields that change (for model_copy). `work`: (subject, setting name, value as
    Python source) of the pieces a commit may ship. `messages`: culprit messages by package;
    a commit on a package that has some carries one of them (not the seed's culprit's) in
    place of its work's subject, ticket and body alike.
    """
    truth = spec.ground_truth
    names = sorted({s.name for s in spec.services})
    # Never in a file the fix edits: a fix written from the culprit's diff may span its end.
    readonly = (
        *tree.readonly_prefixes,
        *(str(step.args["path"]) for step in spec.solution if "path" in step.args),
    )
    sick = [
        s for s in sorted({truth.service, *truth.symptom_services}) if _modules(tree, s, readonly)
    ]
    rest = [s for s in names if s not in sick and _modules(tree, s, readonly)]
    commits = list(tree.commits)
    dated = [c.minutes_ago for c in commits if c.minutes_ago > 0]
    if not dated or not sick:
        return tree, MappingProxyType(dict(hidden_files)), {}
    # The culprit is the newest commit before the page: herrings land around it, how many of
    # them after it drawn uniformly, so "revert the newest" (or the k-th newest) finds it on
    # one seed in count + 1.
    newest = min(dated)
    last = next(c for c in commits if c.minutes_ago == newest)
    culprit = last.message.splitlines()[0]
    # When each file first appeared: a herring appends to a module that existed at its time.
    born: dict[str, float] = {}
    for c in commits:
        for path in c.changes:
            born[path] = max(born.get(path, 0.0), c.minutes_ago)
    after = rng.randint(0, count)
    blocks: list[tuple[float, str, str, str, str, str]] = []
    used: set[str] = set()
    for k in range(count):
        # Three in four on a service the page points at: a culprit's service is sick, and
        # with every other herring elsewhere "revert on a sick service" halved the field.
        pool = (rest or sick) if k % 4 == 3 else sick
        service = rng.choice(pool)
        subject, name, value = rng.choice([w for w in work if w[1] not in used] or list(work))
        used.add(name)
        path = rng.choice(_modules(tree, service, readonly))
        authors, prefix = _team(commits, service)
        ticket = f"{prefix}-{rng.randint(2250, 2399)}"
        block = f"\n\n# {ticket}: {subject}.\n{name} = {value}\n"
        share = rng.uniform(0.15, 0.95) if k < after else rng.uniform(1.05, 2.5)
        minutes = round(max(1.0, newest * share), 1)
        if born.get(path, 0.0) <= minutes:
            # The module came later than the herring: one that was there then, if any.
            there = [p for p in _modules(tree, service, readonly) if born.get(p, 0.0) > minutes]
            if not there:
                continue
            path = there[0]
        message = f"{_package(service)}: {subject} ({ticket})"
        borrowed = [m for m in messages.get(_package(service), ()) if m.splitlines()[0] != culprit]
        if borrowed:
            message = rng.choice(borrowed)
            # The comment names the work as the message does: "subject (TICKET)".
            said = message.splitlines()[0].split(": ", 1)[1]
            block = f"\n\n# {said}\n{name} = {value}\n"
        author = rng.choice(authors)
        if messages:
            # The hour's commits land through one release captain's merge train, under their
            # name: the causes' authors were names no herring carried (half of them by the
            # culprit's author still left the others' names to mean "harmless"), and a learner
            # read the culprit off its author.
            author = last.author
        blocks.append((minutes, author, message, path, block, name))

    # Weave: every commit at or after a herring's time carries its block in the file it
    # appended to, and the chain's shas are recomputed from there on.
    order: list[tuple[float, int, Commit | int]] = [
        (-c.minutes_ago, i, c) for i, c in enumerate(commits)
    ]
    order += [(-b[0], len(commits) + k, k) for k, b in enumerate(blocks)]
    order.sort(key=lambda t: (t[0], t[1]))
    files: dict[str, str] = {}
    woven: list[Commit] = []
    parent: str | None = None
    appended: dict[str, list[str]] = {}
    for _, _, item in order:
        if isinstance(item, int):
            minutes, author, message, path, block, _name = blocks[item]
            changes: dict[str, str | None] = {path: files[path].rstrip("\n") + "\n" + block}
            appended.setdefault(path, []).append(block)
        else:
            minutes, author, message = item.minutes_ago, item.author, item.message
            changes = dict(item.changes)
            for path, added in appended.items():
                content = changes.get(path)
                if content is not None:
                    for block in added:
                        if block not in content:
                            content = content.rstrip("\n") + "\n" + block
                    changes[path] = content
        commit = make_commit(parent, author, message, minutes, changes)
        for path, content in commit.changes.items():
            if content is None:
                files.pop(path, None)
            else:
                files[path] = content
        woven.append(commit)
        parent = commit.sha

    checks = []
    lines = [
        '"""Work other teams shipped around the incident: still in place when it is over."""',
        "",
        "import importlib",
        "",
    ]
    for k, (_m, _a, _msg, path, _b, name) in enumerate(blocks):
        module = path.removesuffix(".py").replace("/", ".").removesuffix(".__init__")
        fn = f"shipped_work_{k}_in_place"
        lines += [
            "",
            f"def {fn}():",
            f"    return repr(getattr(importlib.import_module({module!r}), {name!r}, None))",
            "",
        ]
        checks.append(f"{HERRINGS_FILE}::{fn}")
    hidden = dict(hidden_files)
    hidden[HERRINGS_FILE] = "\n".join(lines).encode()
    update = {
        "hidden": spec.hidden.model_copy(
            update={"pass_to_pass": (*spec.hidden.pass_to_pass, *checks)}
        )
    }
    return (
        BaseTree.from_commits(woven, readonly_prefixes=tree.readonly_prefixes),
        MappingProxyType(hidden),
        update,
    )


__all__ = ["HERRINGS_FILE", "add_herring_commits"]
