"""Reading incident evidence: which log lines point where, and what kind of failure they show."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# Ordered: the first category whose cue matches wins, so the specific beats the generic
# (a stack trace also shows up in a leak or a bad deploy). The knob categories come first: their
# words are the most specific (an expired certificate or a full disk also raises errors), and none
# of them occurs in the older incidents' logs, which keep their diagnosis. Authors write logs
# with these words: simulator/scenarios/README.md, "Evidence vocabulary".
CUES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "expired_certificate",
        re.compile(
            r"x509|certificate (has )?expired|expired certificate|certificate verify failed",
            re.I,
        ),
    ),
    (
        "clock_skew",
        re.compile(
            r"clock (skew|offset|drift)|clock is (ahead|behind)|not yet valid|"
            r"issued in the future|\bNTP\b",
            re.I,
        ),
    ),
    ("disk_full", re.compile(r"no space left on device|ENOSPC|disk (is )?full", re.I)),
    (
        "consumer_lag",
        re.compile(
            r"poison (message|pill)|consumer lag|lagging behind|dead[- ]letter|"
            r"redelivered \d+ times|failed \d+ times",
            re.I,
        ),
    ),
    (
        "cache_stampede",
        re.compile(r"cache stampede|thundering herd|cache miss storm|cache is cold", re.I),
    ),
    (
        "retry_storm",
        re.compile(r"retry storm|retry amplification|attempt \d+ of \d+", re.I),
    ),
    ("feature_flag", re.compile(r"feature[ -]flag", re.I)),
    (
        "slow_query",
        re.compile(
            r"slow query|seq(uential)? scan|statement timeout|missing index|full table scan",
            re.I,
        ),
    ),
    (
        "dependency_bump",
        re.compile(
            r"ImportError|ModuleNotFoundError|cannot import name|"
            r"module '[\w.]+' has no attribute|"
            r"(bump|upgrad)\w* (of )?[\w.-]+ (from|to) v?\d",
            re.I,
        ),
    ),
    (
        "bad_config",
        re.compile(
            r"misconfigur|invalid config|config(uration)? (value|key|error|push|reload)|"
            r"bad config",
            re.I,
        ),
    ),
    (
        "security",
        re.compile(
            r"\bPII\b|personal data|sensitive (field|data)|unmasked|"
            r"raw (phone|e-?mail)|data exposure",
            re.I,
        ),
    ),
    ("bad_migration", re.compile(r"foreign key|circular|violates .*constraint", re.I)),
    (
        "resource_leak",
        re.compile(
            r"pool exhausted|acquir\w* (a )?connection|connection leak|"
            r"connections? (in use|checked out)",
            re.I,
        ),
    ),
    (
        "data_corruption",
        re.compile(
            r"timestamp|out of (the )?attribution window|"
            r"event time",
            re.I,
        ),
    ),
    (
        "bad_deployment",
        re.compile(
            r"UndefinedColumn|does not exist|failed to start|"
            r"migration .*failed|ImagePull",
            re.I,
        ),
    ),
    (
        "crash_loop",
        re.compile(
            r"CrashLoopBackOff|crash loop|back-off restarting|"
            r"stale connection|partition",
            re.I,
        ),
    ),
    (
        "capacity",
        re.compile(
            r"OOMKilled|out of memory|memory limit|cpu (saturat|throttl)|"
            r"queue full|load shedding|traffic",
            re.I,
        ),
    ),
    ("code_bug", re.compile(r"Traceback|Error: |Exception|File \"[^\"]+\", line \d+", re.I)),
)

TRACE_FILE = re.compile(r"File \"(?P<path>[^\"]+\.py)\", line (?P<line>\d+)")
MIGRATION_ID = re.compile(r"\b(\d{3,5}_[a-z0-9_]+)\b")
TRAFFIC_FACTOR = re.compile(r"(\d+(?:\.\d+)?)\s*x\b")
FLAG_NAME = re.compile(r"feature[ -]flag[ :='\"]+([a-z][a-z0-9_.-]*[a-z0-9])", re.I)
"""A flag named in a log line (`feature flag new_checkout ...`)."""
RETRY_KEY = re.compile(r"retr(y|ies)|attempt", re.I)
"""Config keys that govern retries."""
BUMP_COMMIT = re.compile(r"bump|upgrad|requirements|dependenc|lockfile|pin ", re.I)
"""A commit message or file that changes a dependency's version."""

SUITE_FOR = {
    "code_bug": "unit",
    "data_corruption": "integration",
    "resource_leak": "load",
    "security": "security",
    "dependency_bump": "unit",
}
"""The visible suite that exercises each kind of code fault."""


@dataclass(frozen=True, slots=True)
class Finding:
    """What one service's evidence says."""

    service: str
    category: str | None
    cue: str | None
    """The line that decided the category."""
    mentions: tuple[str, ...]
    """Other services its warnings and errors name, in order of first mention."""


def mentioned(text: str, services: Iterable[str], exclude: str) -> list[str]:
    """Services named as whole words in `text`, other than `exclude`."""
    found = []
    for name in services:
        if name != exclude and re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text):
            found.append(name)
    return found


BENIGN = re.compile(r"within (every |its |the )?[\w ]*tolerance|\bin sync\b", re.I)
"""A line that names a mechanism to say it is fine ("clock in sync", "+1.97 s from NTP,
slewing back (within tolerance)"): a healthy neighbour's noise, not a cue. Not "look normal":
a cue line says what is wrong and then what is not ("...; web clicks look normal")."""


def categorise(lines: Sequence[str]) -> tuple[str | None, str | None]:
    """The failure category the lines show, and the line that shows it."""
    for category, pattern in CUES:
        for line in lines:
            if pattern.search(line) and not BENIGN.search(line):
                return category, line
    return None, None


def read_finding(service: str, lines: Sequence[str], services: Sequence[str]) -> Finding:
    """Summarise one service's warning and error lines."""
    category, cue = categorise(lines)
    mentions: list[str] = []
    for line in lines:
        for name in mentioned(line, services, service):
            if name not in mentions:
                mentions.append(name)
    return Finding(service, category, cue, tuple(mentions))


@dataclass(frozen=True, slots=True)
class Hunk:
    """One hunk of a unified diff: old lines became new lines at new_start."""

    path: str
    old_start: int
    new_start: int
    old: tuple[str, ...]
    new: tuple[str, ...]


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def parse_diff(diff: str) -> list[Hunk]:
    """Hunks of a unified diff, in file order."""
    hunks: list[Hunk] = []
    path = ""
    old: list[str] = []
    new: list[str] = []
    starts = (0, 0)

    def flush() -> None:
        if old or new:
            hunks.append(Hunk(path, starts[0], starts[1], tuple(old), tuple(new)))
        old.clear()
        new.clear()

    for line in diff.splitlines():
        if line.startswith("+++ "):
            flush()
            target = line[4:].strip()
            path = target[2:] if target.startswith("b/") else target
        elif line.startswith("--- "):
            flush()
        elif m := _HUNK.match(line):
            flush()
            starts = (int(m.group(1)), int(m.group(3)))
        elif line.startswith("\\"):
            continue
        elif line.startswith("+"):
            new.append(line[1:])
        elif line.startswith("-"):
            old.append(line[1:])
        elif line.startswith(" ") or line == "":
            old.append(line[1:])
            new.append(line[1:])
    flush()
    return hunks
