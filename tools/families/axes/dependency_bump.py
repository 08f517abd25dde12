"""Writes the `[[variants.fault]]` tables of dependency-bump's scenario.toml.

The family's main axis is (service, vendored library, what the library's new major release
changed). Each table must agree with the code exactly: the patch that the bump commit applies,
the line numbers of the trace the broken service logs, the exception text, the reference fix's
lines. So they are derived, not typed: this script builds the tree (the shop topology's history
and this family's commit 06), applies each bump, runs the caller's probe against it and records
the innermost frame and the exception. Run it after changing a library, a caller or a probe:

    python -m tools.families regenerate dependency_bump
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any, TypedDict

from ..authoring import SCENARIOS, fault_axis, log

HERE = SCENARIOS / "dependency_bump"


class Change(TypedDict):
    """One thing a library's new major release changed: one contiguous edit of the module."""

    key: str
    what: str
    """The change, as the release notes would give it."""
    find: str
    """The module's text before the release."""
    bug: str
    """What the release puts in its place."""


class Caller(TypedDict):
    """A service that calls a vendored library, and how a failure there shows."""

    service: str
    pkg: str
    lib: str
    module: str
    """The caller's module (in `pkg`) that uses the library."""
    probe: str
    """The hidden probe that exercises the call."""
    good: str
    bad: str
    """The release that takes the bump."""
    request: str
    """The request that dies."""
    error_rate: float
    upstream: dict[str, tuple[float, str]]
    """Who calls the service: their error rate and what they log."""
    page: str


class Frame(TypedDict):
    """The innermost frame of a probe's traceback and the exception it raised."""

    file: str
    line: int
    func: str
    code: str
    error: str


# Libraries: their current pin and the release the bump commit takes.
VERSIONS = {
    "moneyfmt": ("1.4.2", "2.0.0"),
    "isotime": ("1.2.0", "2.0.0"),
    "skucodes": ("0.9.3", "1.0.0"),
    "tmpl": ("3.1.0", "4.0.0"),
}

# What each library's new release changed: one contiguous edit of the module (find -> bug), in
# the form the release notes would give it.
CHANGES: dict[str, list[Change]] = {
    "moneyfmt": [
        {
            "key": "renamed-keyword",
            "what": "format_money()'s `symbol` keyword was renamed `show_symbol`",
            "find": '''def format_money(minor, currency, *, symbol=True):
    """Render minor units for people: "$1,234.56", or "1,234.56 USD" with symbol=False."""
    digits = _DIGITS[currency]''',
            "bug": '''def format_money(minor, currency, *, show_symbol=True, **renamed):
    """Render minor units for people: "$1,234.56", or "1,234.56 USD" with show_symbol=False."""
    if "symbol" in renamed:
        raise TypeError("format_money(): 'symbol' was renamed to 'show_symbol' in moneyfmt 2.0")
    symbol = show_symbol
    digits = _DIGITS[currency]''',
        },
        {
            "key": "stricter-parsing",
            "what": "to_minor() now refuses amounts without exactly the currency's decimals",
            "find": """    if len(frac) > digits:
        raise ValueError(f"amount {text!r} has more than {digits} decimal places")""",
            "bug": """    if len(frac) != digits:
        raise ValueError(f"amount {text!r} must have exactly {digits} decimal places")""",
        },
        {
            "key": "removed-function",
            "what": "split_evenly() was removed in favour of allocate()",
            "find": '''def split_evenly(minor, parts):
    """Split minor units into `parts` instalments that add up exactly, larger ones first."""
    base, rest = divmod(minor, parts)
    return [base + 1 if i < rest else base for i in range(parts)]''',
            "bug": '''def allocate(minor, ratios):
    """Split minor units by ratios ([1, 1, 1] for thirds); the remainder goes to the first."""
    total = sum(ratios)
    shares = [minor * r // total for r in ratios]
    for i in range(minor - sum(shares)):
        shares[i % len(shares)] += 1
    return shares


def __getattr__(name):
    if name == "split_evenly":
'''
            '        raise AttributeError("moneyfmt 2.0 removed split_evenly(); use allocate(minor,'
            ' [1] * parts)")\n'
            """    raise AttributeError(f"module 'moneyfmt' has no attribute {name!r}")""",
        },
        {
            "key": "return-type",
            "what": "to_minor() returns a Money object instead of an int of minor units",
            "find": """    return sign * (units + int(frac.ljust(digits, "0") or "0"))""",
            "bug": '    return Money(sign * (units + int(frac.ljust(digits, "0") or "0")),'
            " currency)"
            '''


class Money:
    """An amount in minor units and its currency; int(money) gives the minor units."""

    def __init__(self, minor, currency):
        self.minor, self.currency = minor, currency

    def __int__(self):
        return self.minor

    def __mul__(self, other):
'''
            '        raise TypeError("moneyfmt 2.0: Money * int is ambiguous; use money.scale(n) or'
            ' int(money)")',
        },
    ],
    "isotime": [
        {
            "key": "stricter-parsing",
            "what": "parse_ts() no longer accepts a bare date",
            "find": """    if len(text) == 10:
        text += "T00:00:00"
    date, _, rest = text.partition("T")""",
            "bug": """    if len(text) == 10:
        raise ValueError(f"isotime 2.0 parses date-times only, not bare dates: {text!r}")
    date, _, rest = text.partition("T")""",
        },
        {
            "key": "changed-default",
            "what": "parse_ts() now refuses naive times unless called with assume_utc=True",
            "find": '''def parse_ts(text):
    """Epoch seconds of "2026-03-01T10:00:00Z", "...+02:00", a naive time (UTC) or a date."""
    text = text.strip()
    if len(text) == 10:
        text += "T00:00:00"
    date, _, rest = text.partition("T")
    clock, offset = rest[:8], rest[8:]''',
            "bug": '''def parse_ts(text, *, assume_utc=False):
    """Epoch seconds of "2026-03-01T10:00:00Z" or "...+02:00"; naive times need assume_utc."""
    text = text.strip()
    if len(text) == 10:
        text += "T00:00:00"
    date, _, rest = text.partition("T")
    clock, offset = rest[:8], rest[8:]
    if not offset and not assume_utc:
        raise ValueError(f"naive time {text!r}: isotime 2.0 needs an offset or assume_utc=True")''',
        },
        {
            "key": "renamed-keyword",
            "what": "format_ts()'s `with_z` keyword was renamed `zulu`",
            "find": '''def format_ts(epoch, *, with_z=True):
    """ISO-8601 text of epoch seconds in UTC; with_z=False leaves the "Z" off."""''',
            "bug": '''def format_ts(epoch, *, zulu=True, **renamed):
    """ISO-8601 text of epoch seconds in UTC; zulu=False leaves the "Z" off."""
    if "with_z" in renamed:
        raise TypeError("format_ts(): 'with_z' was renamed to 'zulu' in isotime 2.0")
    with_z = zulu''',
        },
        {
            "key": "return-type",
            "what": "parse_ts() returns an Instant object instead of epoch seconds",
            "find": "    return _days_from_civil(y, m, d) * 86400 + hh * 3600 + mm * 60"
            " + ss - shift",
            "bug": "    return Instant(_days_from_civil(y, m, d) * 86400 + hh * 3600 + mm * 60"
            " + ss - shift)"
            '''


class Instant:
    """A point in time; instant.epoch gives epoch seconds."""

    def __init__(self, epoch):
        self.epoch = epoch

    def __lt__(self, other):
        return self.epoch < other.epoch

    def __add__(self, other):
        raise TypeError("isotime 2.0: add a Duration to an Instant, or use instant.epoch + seconds")

    def __sub__(self, other):
        raise TypeError("isotime 2.0: Instant - Instant is a Duration; use .epoch for seconds")''',
        },
    ],
    "skucodes": [
        {
            "key": "stricter-parsing",
            "what": "normalize() no longer turns spaces and underscores into dashes",
            "find": '    """Canonical form of a SKU: trimmed, lower case, spaces and underscores as'
            ' dashes."""\n'
            """    code = sku.strip().lower().replace(" ", "-").replace("_", "-")
    if not code or not set(code) <= _ALLOWED:
        raise ValueError(f"not a SKU: {sku!r}")""",
            "bug": '    """Canonical form of a SKU: trimmed and lower case; only a-z, 0-9 and'
            ' dashes."""\n'
            """    code = sku.strip().lower()
    if not code or not set(code) <= _ALLOWED:
        raise ValueError(f"not a SKU: {sku!r} (skucodes 1.0 accepts a-z, 0-9 and '-' only)")""",
        },
        {
            "key": "changed-default",
            "what": "parse_qty()'s max_qty default dropped from 99 to 20",
            "find": '''def parse_qty(text, *, max_qty=99):
    """An order-line quantity from text: a whole number from 1 to max_qty."""
    qty = int(str(text).strip())
    if not 1 <= qty <= max_qty:
        raise ValueError(f"quantity {qty} outside 1..{max_qty}")''',
            "bug": '''def parse_qty(text, *, max_qty=20):
    """An order-line quantity from text: a whole number from 1 to max_qty (20 by default)."""
    qty = int(str(text).strip())
    if not 1 <= qty <= max_qty:
        raise ValueError(f"quantity {qty} outside 1..{max_qty} (skucodes 1.0 default max_qty)")''',
        },
        {
            "key": "removed-function",
            "what": "split_bundle() was removed (bundles now come expanded from the catalog API)",
            "find": '''def split_bundle(sku):
    """The SKUs a bundle code ("mug+coaster") stands for, each normalised."""
    return [normalize(part) for part in sku.split("+")]''',
            "bug": """def __getattr__(name):
    if name == "split_bundle":
        raise AttributeError("skucodes 1.0 removed split_bundle(); the catalog API expands bundles")
    raise AttributeError(f"module 'skucodes' has no attribute {name!r}")""",
        },
    ],
    "tmpl": [
        {
            "key": "changed-default",
            "what": 'render()\'s `missing` default changed from "keep" to "error"',
            "find": '''def render(template, params, *, missing="keep"):
    """Fill "{name}" fields from params; missing="keep" leaves unknown fields as written."""

    def fill(match):
        name = match.group(1)
        if name in params:
            return str(params[name])
        if missing == "blank":
            return ""
        return match.group(0)''',
            "bug": '''def render(template, params, *, missing="error"):
    """Fill "{name}" fields from params; unknown ones raise unless missing="keep"/"blank"."""

    def fill(match):
        name = match.group(1)
        if name in params:
            return str(params[name])
        if missing == "blank":
            return ""
        if missing == "error":
            raise KeyError("template field " + match.group(0) + " has no value (tmpl 4.0 default)")
        return match.group(0)''',
        },
        {
            "key": "renamed-keyword",
            "what": "truncate()'s `ellipsis` keyword was renamed `suffix`",
            "find": '''def truncate(text, width=60, *, ellipsis="..."):
    """Cut text to at most width characters, ending with ellipsis when cut."""''',
            "bug": '''def truncate(text, width=60, *, suffix="...", **renamed):
    """Cut text to at most width characters, ending with suffix when cut."""
    if "ellipsis" in renamed:
        raise TypeError("truncate(): 'ellipsis' was renamed to 'suffix' in tmpl 4.0")
    ellipsis = suffix''',
        },
        {
            "key": "removed-function",
            "what": "pluralize() was removed (use the locale-aware plural() instead)",
            "find": '''def pluralize(count, singular, plural=None):
    """ "1 order", "3 orders"; plural defaults to singular + "s"."""
    word = singular if count == 1 else (plural or singular + "s")
    return f"{count} {word}"''',
            "bug": '''def plural(count, forms, locale="en"):
    """ "1 order", "3 orders" from forms {"one": "order", "other": "orders"}."""
    return f"{count} {forms['one'] if count == 1 else forms['other']}"


def __getattr__(name):
    if name == "pluralize":
        raise AttributeError("tmpl 4.0 removed pluralize(); use plural(count, forms, locale)")
    raise AttributeError(f"module 'tmpl' has no attribute {name!r}")''',
        },
    ],
}

# Who calls which vendored library, and how a failure there shows: the request that dies,
# who calls the service and what they log, the page.
CALLERS: list[Caller] = [
    {
        "service": "checkout-service",
        "pkg": "checkout_service",
        "lib": "moneyfmt",
        "module": "pricing",
        "probe": "checkout_quote_prices_carts",
        "good": "v1.4.0",
        "bad": "v1.4.1",
        "request": "POST /v1/checkout",
        "error_rate": 0.71,
        "upstream": {
            "api-gateway": (0.34, "POST /v1/checkout 502: upstream checkout-service answered 500")
        },
        "page": "checkout-service 5xx above 5% on POST /v1/checkout; customers cannot pay.",
    },
    {
        "service": "payment-service",
        "pkg": "payment_service",
        "lib": "moneyfmt",
        "module": "payouts",
        "probe": "payment_payout_plans",
        "good": "v2.3.1",
        "bad": "v2.3.2",
        "request": "POST /v1/payouts/plan",
        "error_rate": 0.46,
        "upstream": {
            "api-gateway": (
                0.12,
                "POST /v1/payouts/plan 502: upstream payment-service answered 500",
            )
        },
        "page": "payment-service 5xx above 5%; merchant payout plans are failing.",
    },
    {
        "service": "order-service",
        "pkg": "order_service",
        "lib": "isotime",
        "module": "delivery",
        "probe": "order_delivery_windows",
        "good": "v2.1.0",
        "bad": "v2.1.1",
        "request": "POST /v1/orders",
        "error_rate": 0.83,
        "upstream": {
            "checkout-service": (0.41, "order-service attempt 1 answered 500"),
            "api-gateway": (
                0.22,
                "POST /v1/checkout 503: upstream checkout-service answered 503 order_unavailable",
            ),
        },
        "page": "checkout-service failing to place orders; order-service 5xx above 5% on"
        " POST /v1/orders.",
    },
    {
        "service": "user-service",
        "pkg": "user_service",
        "lib": "isotime",
        "module": "activity",
        "probe": "user_activity_panels",
        "good": "v1.10.0",
        "bad": "v1.10.1",
        "request": "GET /v1/users/me/activity",
        "error_rate": 0.38,
        "upstream": {
            "api-gateway": (
                0.09,
                "GET /v1/users/me/activity 502: upstream user-service answered 500",
            )
        },
        "page": "user-service 5xx above 5%; the profile page shows an error.",
    },
    {
        "service": "auth-service",
        "pkg": "auth_service",
        "lib": "isotime",
        "module": "sessions",
        "probe": "auth_session_expiries",
        "good": "v3.2.0",
        "bad": "v3.2.1",
        "request": "POST /v1/login",
        "error_rate": 0.64,
        "upstream": {
            "api-gateway": (0.31, "POST /v1/login 502: upstream auth-service answered 500"),
            "user-service": (0.08, "auth-service revoke answered 500 after an e-mail change"),
        },
        "page": "auth-service 5xx above 5% on POST /v1/login; customers cannot sign in.",
    },
    {
        "service": "inventory-service",
        "pkg": "inventory_service",
        "lib": "skucodes",
        "module": "receiving",
        "probe": "inventory_manifest_receipts",
        "good": "v1.4.1",
        "bad": "v1.4.2",
        "request": "POST /v1/stock/receipts",
        "error_rate": 0.29,
        "upstream": {},
        "page": "inventory-service 5xx above 5%; warehouse goods receiving is failing.",
    },
    {
        "service": "order-service",
        "pkg": "order_service",
        "lib": "skucodes",
        "module": "lines",
        "probe": "order_lines_from_carts",
        "good": "v2.1.0",
        "bad": "v2.1.1",
        "request": "POST /v1/orders",
        "error_rate": 0.57,
        "upstream": {
            "checkout-service": (0.28, "order-service attempt 2 answered 500"),
            "api-gateway": (
                0.15,
                "POST /v1/checkout 503: upstream checkout-service answered 503 order_unavailable",
            ),
        },
        "page": "checkout-service failing to place orders; order-service 5xx above 5% on"
        " POST /v1/orders.",
    },
    {
        "service": "notification-service",
        "pkg": "notification_service",
        "lib": "tmpl",
        "module": "digest",
        "probe": "notification_digests",
        "good": "v0.8.1",
        "bad": "v0.8.2",
        "request": "POST /v1/digests/weekly",
        "error_rate": 0.52,
        "upstream": {},
        "page": "notification-service 5xx above 5%; the weekly digest send is failing.",
    },
]

RUN_PROBE = textwrap.dedent(
    """
    import json, sys, traceback
    sys.path.insert(0, sys.argv[1])
    import probes
    try:
        getattr(probes, sys.argv[2])()
    except Exception as exc:
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        error = traceback.format_exception_only(exc)[-1].strip()
        print(json.dumps({"file": frame.filename, "line": frame.lineno, "func": frame.name,
                          "code": frame.line, "error": error}))
    else:
        print("null")
    """
)


def base_tree() -> dict[str, str]:
    """The healthy tree: the shop topology's history and this family's commit 06."""
    from metasre.simulator.history import load_history_dir
    from metasre.simulator.scenarios.loader import TOPOLOGIES_DIR

    files: dict[str, str] = {}
    load_history_dir(TOPOLOGIES_DIR / "shop" / "history", files=files)
    # This family's healthy commits (before the bump, which the tables describe).
    for commit in sorted((HERE / "history").glob("06-*")):
        for file in sorted(commit.rglob("*")):
            if file.is_file() and file.name != "commit.toml":
                files[file.relative_to(commit).as_posix()] = file.read_text()
    return files


def observe(files: dict[str, str], probe: str) -> Frame | None:
    """Run `probe` against `files`; where it raised, or None when it passed."""
    with tempfile.TemporaryDirectory() as tmp:
        for path, text in files.items():
            target = Path(tmp) / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        (Path(tmp) / "probes.py").write_text((HERE / "hidden" / "probes.py").read_text())
        out = subprocess.run(
            [sys.executable, "-c", RUN_PROBE, tmp, probe],
            capture_output=True,
            text=True,
            check=True,
            cwd=tmp,
        ).stdout
        seen: Frame | None = json.loads(out)
        if seen is not None:
            seen["file"] = Path(seen["file"]).resolve().relative_to(Path(tmp).resolve()).as_posix()
        return seen


def tables() -> list[dict[str, Any]]:
    """Every `[[variants.fault]]` table, in order: per caller, per change of its library."""
    files = base_tree()
    # Every caller's probe, and the api-gateway's (its isotime is never the bumped one).
    probes = [c["probe"] for c in CALLERS] + ["gateway_quota_windows"]
    for probe in probes:
        assert observe(files, probe) is None, f"{probe} fails on healthy code"
    out: list[dict[str, Any]] = []
    for caller in CALLERS:
        lib, pkg, svc = caller["lib"], caller["pkg"], caller["service"]
        old, new = VERSIONS[lib]
        path, pin = f"{pkg}/_vendor/{lib}.py", f"{pkg}/vendor.txt"
        for change in CHANGES[lib]:
            text = files[path]
            assert text.count(change["find"]) == 1, (path, change["key"])
            bumped = text.replace(f'__version__ = "{old}"', f'__version__ = "{new}"')
            bumped = bumped.replace(change["find"], change["bug"])
            broken = {
                **files,
                path: bumped,
                pin: files[pin].replace(f"{lib}=={old}", f"{lib}=={new}"),
            }
            seen = observe(broken, caller["probe"])
            assert seen is not None and seen["file"] == path, (svc, lib, change["key"], seen)
            first = bumped[: bumped.index(change["bug"])].count("\n") + 1
            last = first + change["bug"].count("\n")
            assert first <= seen["line"] <= last, (svc, lib, change["key"], seen, first, last)
            version_line = bumped.split("\n").index(f'__version__ = "{new}"') + 1
            pin_line = (
                broken[pin]
                .split("\n")
                .index(
                    next(line for line in broken[pin].split("\n") if line.startswith(f"{lib}=="))
                )
                + 1
            )
            pin_text = next(line for line in files[pin].split("\n") if line.startswith(f"{lib}=="))
            frame = [
                f'  File "{path}", line {seen["line"]}, in {seen["func"]}',
                f"    {seen['code']}",
                seen["error"],
            ]
            request = caller["request"]
            effects = {svc: {"error_rate": caller["error_rate"], "p99_ms": 240, "cpu": 0.06}}
            logs = [
                log(
                    svc,
                    "ERROR",
                    f"{request} 500 Internal Server Error version={caller['bad']}",
                    "Traceback (most recent call last, innermost frame):",
                    *frame,
                )
            ]
            alerts = [
                {
                    "service": svc,
                    "metric": "error_rate",
                    "above": 0.05,
                    "severity": "P1",
                    "summary": f"{svc} 5xx rate above 5% on {request}",
                }
            ]
            for up, (rate, line) in caller["upstream"].items():
                effects[up] = {"error_rate": rate, "p99_ms": 180}
                logs.append(log(up, "WARN" if rate < 0.1 else "ERROR", line))
                if rate >= 0.1:
                    alerts.append(
                        {
                            "service": up,
                            "metric": "error_rate",
                            "above": 0.05,
                            "severity": "P2",
                            "summary": f"{up} 5xx rate above 5%",
                        }
                    )
            # Difficulty: a release note in the error (renamed, removed) is easy to read; a
            # default or a parser that got stricter takes the caller's input to explain;
            # a root two hops below the page is one step harder to find.
            level = {"renamed-keyword": 0, "removed-function": 0, "return-type": 0}.get(
                change["key"], 1
            )
            level += len(caller["upstream"]) >= 2
            out.append(
                {
                    "key": f"{pkg.removesuffix('_service')}-{lib}-{change['key']}",
                    "difficulty": ["easy", "medium", "hard"][level],
                    "service": svc,
                    "pkg": pkg,
                    "lib": lib,
                    "old": old,
                    "new": new,
                    "good": caller["good"],
                    "bad": caller["bad"],
                    "what": change["what"],
                    "caller": f"{pkg}/{caller['module']}.py",
                    "request": request,
                    "page": caller["page"],
                    "file": path,
                    "pin_file": pin,
                    "find": change["find"],
                    "bug": change["bug"],
                    "lines": [first, last],
                    "trace_line": seen["line"],
                    "error": seen["error"],
                    "fix": {
                        "path": path,
                        "action": "replace",
                        "start_line": first,
                        "end_line": last,
                        "content": change["find"],
                    },
                    "fix_version": {
                        "path": path,
                        "action": "replace",
                        "start_line": version_line,
                        "end_line": version_line,
                        "content": f'__version__ = "{old}"',
                    },
                    "fix_pin": {
                        "path": pin,
                        "action": "replace",
                        "start_line": pin_line,
                        "end_line": pin_line,
                        "content": pin_text,
                    },
                    "effects": effects,
                    "logs": logs,
                    "alerts": alerts,
                    "symptoms": sorted(caller["upstream"]),
                    "fail_to_pass": [f"hidden/probes.py::{caller['probe']}"],
                    "pass_to_pass": [
                        f"hidden/probes.py::{p}" for p in probes if p != caller["probe"]
                    ],
                }
            )
    return out


def axes() -> str:
    """The main axis."""
    return fault_axis(tables())
