"""The `metasre report` command: inputs read, the page built and written, one line printed."""

from __future__ import annotations

import argparse
import ipaddress
import sys
import time
from pathlib import Path
from typing import Any

from ..arguments import add_command, port_number
from ..errors import ExitCode, OutputError, UsageError

DEFAULT_OUT = "report.html"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


def loopback_host(text: str) -> str:
    """--host: a loopback address (localhost is 127.0.0.1), else an error naming what is allowed.

    The served page shows every trajectory to whoever reaches it and checks nobody, so it is
    never offered beyond this machine.
    """
    try:
        address = ipaddress.ip_address("127.0.0.1" if text == "localhost" else text.strip("[]"))
    except ValueError:
        address = None
    if address is None or not address.is_loopback:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a loopback address: the served report listens on this machine "
            "only (127.0.0.1, another 127.x.x.x, ::1 or localhost), since it shows every "
            "trajectory to whoever reaches it; to share it, write the file (drop --serve)"
        )
    return str(address)


MISSING_EXTRA = (
    "metasre report needs its plotting and template libraries: pip install 'metasre[report]' "
    "(or '.[report]' in a checkout)"
)


def add_parser(sub: Any) -> None:
    """Register `report` on the command line's subparsers."""
    p = add_command(
        sub,
        "report",
        "write one self-contained HTML page of results from trajectory stores or exports",
        "Read one or more trajectory stores (SQLite, as serve, rollout and demo write them) or "
        "exported JSONL files (metasre export), and optionally the output of `metasre "
        "validate --json`, and write one HTML page that opens with no "
        "network: a summary per configuration (resolved rate, grade and its components, SLA "
        "met, steps, simulated minutes, with 95% bootstrap intervals over seeds), the pass "
        "matrix of families x configurations, pass@k and pass^k where instances were tried "
        "more than once, credit per seat and teamwork figures for teams, the grade "
        "distributions per family (and what validate measured: reference, expert, random, "
        "wrong fix, reward-hacking probes), a comparison of the first two inputs when there are "
        "several, and a trajectory viewer. Name an input LABEL=PATH to label its run "
        "(default: the file's name).",
    )
    p.add_argument(
        "inputs",
        nargs="+",
        metavar="[LABEL=]PATH",
        help="trajectory stores, exported JSONL files or `metasre validate --json` output; the "
        "first two stores or exports are compared",
    )
    p.add_argument(
        "--out",
        metavar="FILE",
        help=f"the page to write (default: {DEFAULT_OUT}; not with --serve)",
    )
    p.add_argument("--title", default="META-SRE results", help="the page's title")
    g = p.add_argument_group("live page")
    g.add_argument(
        "--serve",
        action="store_true",
        help="serve the page on --host:--port instead of writing it, rebuilt and reloaded in "
        "the browser whenever an input changes (a store a running server writes); Ctrl-C or "
        "SIGTERM stops it",
    )
    g.add_argument(
        "--host",
        type=loopback_host,
        help=f"with --serve, the loopback address to listen on (default: {DEFAULT_HOST})",
    )
    g.add_argument(
        "--port",
        type=port_number,
        help=f"with --serve, the port (default: {DEFAULT_PORT}; 0: any free one)",
    )
    p.set_defaults(func=report_command)


def report_command(args: argparse.Namespace) -> int:
    """Run `metasre report`; the exit code."""
    try:
        from .page import build_report
    except ImportError as exc:
        if exc.name in ("plotly", "jinja2", "markupsafe"):
            raise UsageError(f"{MISSING_EXTRA} (missing: {exc.name})") from None
        raise
    from .sources import read_runs

    if args.serve:
        from .serve import serve

        if args.out is not None:
            raise UsageError(
                "--serve writes no file: drop --out to serve the page, or --serve to write it"
            )
        host = DEFAULT_HOST if args.host is None else args.host
        port = DEFAULT_PORT if args.port is None else args.port
        try:
            serve(args.inputs, args.title, host, port)
        except ValueError as exc:
            raise UsageError(f"{exc}; play some with `metasre rollout` first") from None
        return int(ExitCode.OK)
    if args.host is not None or args.port is not None:
        raise UsageError("--host and --port are for --serve; add it to serve the page live")
    out = Path(DEFAULT_OUT if args.out is None else args.out)
    if not out.parent.is_dir():
        raise OutputError(f"cannot write {out}: the folder {out.parent} does not exist")
    started = time.perf_counter()
    runs = read_runs(args.inputs)
    try:
        report = build_report(runs, title=args.title)
    except ValueError as exc:
        raise UsageError(f"{exc}; play some with `metasre rollout` first") from None
    try:
        out.write_text(report.html, encoding="utf-8")
    except OSError as exc:
        raise OutputError(f"cannot write {out}: {exc.strerror}; choose a writable --out") from None
    print(
        f"report: {report.episodes} episode{'' if report.episodes == 1 else 's'}, "
        f"{report.configs} configuration{'' if report.configs == 1 else 's'}, "
        f"{report.families} famil{'y' if report.families == 1 else 'ies'} -> {out} "
        f"({len(report.html.encode()) / 1e6:.1f} MB, "
        f"{time.perf_counter() - started:.1f} s)",
        file=sys.stderr,
    )
    return int(ExitCode.OK)
