"""`python -m tools.families check|regenerate [family ...]` (see the package's docstring)."""

from __future__ import annotations

import argparse
import sys
import time

from . import __doc__ as about
from . import stale, unit, units, write


def main(argv: list[str] | None = None) -> int:
    """Check or regenerate the families named (all when none); 1 when any is stale."""
    parser = argparse.ArgumentParser(
        prog="python -m tools.families",
        description=about.splitlines()[0] if about else None,
        epilog="Mixes (scenario.toml with causes) are hand-written and never generated.",
    )
    parser.add_argument("action", choices=["check", "regenerate"])
    parser.add_argument(
        "families", nargs="*", help="folder names (or _topologies/<name>); all when none"
    )
    args = parser.parse_args(argv)
    chosen = [unit(name) for name in args.families] if args.families else units()
    failed: list[str] = []
    for u in chosen:
        start = time.perf_counter()
        if args.action == "check":
            problems = stale(u)
            if problems:
                failed.append(u.name)
            for problem in problems:
                print(problem)
            verdict = "stale" if problems else "ok"
        else:
            verdict = f"{len(write(u))} files written"
        print(f"{u.name}: {verdict} ({time.perf_counter() - start:.1f} s)", file=sys.stderr)
    if failed:
        print(f"{len(failed)} stale: run python -m tools.families regenerate {' '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
