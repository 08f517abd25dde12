"""Progress of a long command on stderr: a bar on a terminal, a few lines elsewhere."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any


@contextlib.contextmanager
def progress(total: int, agent: str, *, enabled: bool) -> Iterator[Callable[[Any], None]]:
    """Progress on stderr (stdout stays for the table and --json).

    A bar on a terminal; elsewhere (CI logs, a pipe) a line at the first episode and at each
    tenth of the run, so that a long run shows it is alive without flooding the log.
    """
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    console = Console(stderr=True)
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[resolved]} resolved"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=not enabled or not console.is_terminal,
        transient=True,
    )
    task = progress.add_task(f"rollout ({agent})", total=total, resolved=0)
    lines = enabled and not console.is_terminal
    step = max(1, total // 10)
    done = resolved = 0
    started = time.perf_counter()

    def tick(result: Any) -> None:
        nonlocal done, resolved
        done += 1
        resolved += bool(result.resolved)
        progress.update(task, advance=1, resolved=resolved)
        if lines and (done == 1 or done % step == 0 or done == total):
            print(
                f"progress: {done}/{total} episodes, {resolved} resolved, "
                f"{time.perf_counter() - started:.1f} s",
                file=sys.stderr,
                flush=True,
            )

    with progress:
        yield tick
