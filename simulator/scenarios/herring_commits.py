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


_PIN = re.compile(r"^([a-z_]+)==([0-9][0-9.]*)", re.MULTILINE)


def _vendored(
    tree: BaseTree, commits: Sequence[Commit], culprit: str
) -> list[tuple[str, str, str]]:
    """(package, library, pinned version) of every library the tree vendors.

    Not the culprit package's, nor those a commit of the last two days re-pinned: their history
    is the cause's own story, which a herring's pin would contradict.
    """
    recent = {
        p
        for c in commits
        if 0 < c.minutes_ago < 2 * 1440
        for p in c.changes
        if p.endswith("vendor.txt")
    }
    found = []
    for path in sorted(tree.files):
        package = path.partition("/")[0]
        if path != f"{package}/vendor.txt" or path in recent or culprit.startswith(f"{package}/"):
            continue
        for lib, pin in _PIN.findall(str(tree.files[path])):
            if f"{package}/_vendor/{lib}.py" in tree.files:
                found.append((package, lib, pin))
    return found


def _bump(
    package: str,
    lib: str,
    pin: str,
    bumps: Sequence[tuple[str, str, str]],
    name: str,
    value: str,
    rng: random.Random,
) -> tuple[str, str, tuple[tuple[str, str, str], ...], str]:
    """A harmless bump of `lib` in `package`: (new version, module, edits, appended block).

    To the version a culprit bumps it to (a major release, as theirs are), else to the next
    major: the release adds a setting (`name = value`) and changes nothing the callers use. Its
    pin, `__version__` and the added setting change as a culprit's bump changes them.
    """
    same = [new for name, old, new in bumps if name == lib and old == pin]
    new = rng.choice(same) if same else f"{int(pin.split('.')[0]) + 1}.0.0"
    module = f"{package}/_vendor/{lib}.py"
    edits = (
        (f"{package}/vendor.txt", f"{lib}=={pin}", f"{lib}=={new}"),
        (module, f'__version__ = "{pin}"', f'__version__ = "{new}"'),
    )
    return new, module, edits, f"\n\n# New in {lib} {new}.\n{name} = {value}\n"


def add_herring_commits(
    spec: ScenarioSpec,
    tree: BaseTree,
    hidden_files: Mapping[str, bytes],
    work: Sequence[tuple[str, str, str]],
    count: int,
    rng: random.Random,
    messages: Mapping[str, Sequence[str]] = MappingProxyType({}),
    bumps: Sequence[tuple[str, str, str]] = (),
    bump_count: int = 0,
) -> tuple[BaseTree, MappingProxyType[str, bytes], dict[str, Any]]:
    """`tree` with `count` harmless commits woven into its history, and what goes with them.

    Returns the new tree, the hidden files with the checks that the commits' work stays, and
    the spec fields that change (for model_copy). `work`: (subject, setting name, value as
    Python source) of the pieces a commit may ship. `messages`: culprit messages by package;
    a commit on a package that has some carries one of them (not the seed's culprit's) in
    place of its work's subject, ticket and body alike. `bumps`: the culprits' library bumps
    (library, from, to); the first `bump_count` commits bump a library another package
    vendors in the same way (see `_bump`), where the tree vendors any.
    """
    truth = spec.ground_truth
    names = sorted({s.name for s in spec.services})
    # Never in a file the fix edits: a fix written from the culprit's diff may span its end.
    readonly = (
        *tree.readonly_prefixes,
        *(str(step.args["path"]) for step in spec.solution if "path" in step.args),
    )
    # Weather rows are sick on the dashboard as the symptoms are: work lands on them alike.
    shown_sick = {truth.service, *truth.symptom_services, *(w.service for w in spec.weather)}
    sick = [s for s in sorted(shown_sick) if _modules(tree, s, readonly)]
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
    edits: dict[int, tuple[tuple[str, str, str], ...]] = {}
    """By block: (path, old text, new text) its commit changes besides appending its work."""
    used: set[str] = set()
    said_already: set[str] = set()
    vendored = _vendored(tree, commits, truth.location) if bump_count and bumps else []
    for k in range(count):
        if k < bump_count and vendored:
            # On a sick row as the other herrings are (three in four), the culprit's is one.
            on_sick = {_package(x) for x in sick}
            bumpable = [v for v in vendored if (v[0] in on_sick) != (k % 4 == 3)] or vendored
            # Libraries the culprits bump first: a library only herrings bumped was a word
            # that meant "harmless" (shop-errors-v3's learner undid the bad bump on 7 of 9).
            culprits = {b[0] for b in bumps}
            package, lib, pin = pick = rng.choice(
                [v for v in bumpable if v[1] in culprits] or bumpable
            )
            vendored.remove(pick)
            subject, name, value = rng.choice([w for w in work if w[1] not in used] or list(work))
            used.add(name)
            bump = _bump(package, lib, pin, bumps, name, value, rng)
            # One person's round of bumps, minutes apart: spread over the hour as other work
            # is, the culprit's was the bump nearest the onset.
            gap = rng.uniform(0.5, 8.0)
            minutes = round(max(1.0, newest - gap if k < after else newest + gap), 1)
            # Under the culprit's ticket prefix and with a body like its own, as one round's are.
            _, prefix = _team(commits, package)
            prefix = m.group(1) if (m := _TICKET.search(last.message)) else prefix
            ticket = f"{prefix}-{rng.randint(2250, 2399)}"
            message = (
                f"{package}: bump vendored {lib} {pin} -> {bump[0]} ({ticket})\n\n"
                f"Renovate flagged {lib} {pin} as behind; {bump[0]} is the version the"
                " platform repos\ntest against now. Copied the release's module over"
                f" {bump[1]} and moved the pin\nin {package}/vendor.txt."
            )
            edits[len(blocks)] = bump[2]
            # The culprit's bumper bumps the other packages too.
            author = last.author
            blocks.append((minutes, author, message, bump[1], bump[3], name))
            continue
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
        borrowed = [
            m
            for m in messages.get(_package(service), ())
            if m.splitlines()[0] != culprit and m not in said_already
        ]
        if borrowed:
            message = rng.choice(borrowed)
            said_already.add(message)
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
    replaced: dict[str, list[tuple[str, str]]] = {}
    for _, _, item in order:
        if isinstance(item, int):
            minutes, author, message, path, block, _name = blocks[item]
            changes: dict[str, str | None] = {}
            for where, old, new in edits.get(item, ()):
                changes[where] = str(changes.get(where) or files[where]).replace(old, new, 1)
                replaced.setdefault(where, []).append((old, new))
            changes[path] = str(changes.get(path) or files[path]).rstrip("\n") + "\n" + block
            appended.setdefault(path, []).append(block)
        else:
            minutes, author, message = item.minutes_ago, item.author, item.message
            changes = dict(item.changes)
            for path, pairs in replaced.items():
                content = changes.get(path)
                if content is not None:
                    for old, new in pairs:
                        content = content.replace(old, new, 1)
                    changes[path] = content
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
