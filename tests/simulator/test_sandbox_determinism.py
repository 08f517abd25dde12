"""Every sandboxed run sees the same clock and the same random numbers (helper/determinism.py).

Through the real runners: the agents' visible runner (``run_tests``), a fresh-interpreter
runner, and the probe runners (traffic and grader). A run that prints every clock and every
random source it can reach prints the same thing every time, on every runner of a kind; waits
(``time.sleep``, ``asyncio.sleep``) move the clock instead of taking wall time; and the
stand-in ``datetime`` classes still accept the real classes' instances.
"""

from __future__ import annotations

import time

import pytest

from metasre.simulator.probe_calls import PROBE_PATH
from metasre.simulator.sandbox import (
    SubprocessRunner,
    default_grader_runner,
    default_runner,
    default_traffic_runner,
)

SOURCES = """
import asyncio, datetime, hashlib, os, random, secrets, time, uuid

def readings():
    async def nap():
        before = time.monotonic()
        await asyncio.sleep(30)
        return time.monotonic() - before
    slept = asyncio.run(nap())
    before = time.time()
    time.sleep(600)
    return {
        "time": time.time(), "time_ns": time.time_ns(), "monotonic": time.monotonic(),
        "perf": time.perf_counter(), "slept": round(time.time() - before),
        "async_slept": round(slept), "now": datetime.datetime.now().isoformat(),
        "utcnow": datetime.datetime.utcnow().isoformat(), "today": str(datetime.date.today()),
        "strftime": time.strftime("%Y-%m-%d %H:%M"), "localtime": list(time.localtime())[:6],
        "random": random.random(), "new_random": random.Random().random(),
        "urandom": os.urandom(8).hex(), "secrets": secrets.token_hex(8),
        "system": random.SystemRandom().random(), "uuid4": str(uuid.uuid4()),
        "uuid1_node": uuid.uuid1().node, "hash": hash("metasre"),
        "real_instance": isinstance(datetime.datetime(2020, 1, 1), datetime.date),
        "repr": repr(datetime.datetime(2020, 1, 1)),
    }
"""
TEST = (
    SOURCES
    + """
def test_readings():
    print("READINGS", readings())
"""
)


def _printed(report: object) -> str:
    lines = [ln for ln in report.output.splitlines() if ln.startswith("READINGS")]  # type: ignore[attr-defined]
    assert lines, report
    return lines[0]


def test_visible_runs_see_the_same_clock_and_streams_every_time() -> None:
    files = {"tests/test_chance.py": TEST.encode()}
    started = time.monotonic()
    # distinct files each time: the visible runner's cache must not be what makes them equal
    seen = []
    for n in range(2):
        run = {**files, f"pad_{n}.py": b""}
        seen.append(_printed(default_runner().run(run, ["tests/test_chance.py"])))
    assert seen[0] == seen[1]
    assert time.monotonic() - started < 60, "the sleeps took wall time"
    assert "'slept': 600" in seen[0] and "'async_slept': 30" in seen[0]
    assert "2026-12-01" in seen[0] and "'real_instance': True" in seen[0]
    assert "'repr': 'datetime.datetime(2020, 1, 1, 0, 0)'" in seen[0]
    with SubprocessRunner() as fresh:
        again = _printed(fresh.run({**files, "pad_0.py": b""}, ["tests/test_chance.py"]))
    # a fresh interpreter reads the clock a few more times on its way in: same streams, dates
    for key in ("'random'", "'urandom'", "'secrets'", "'uuid4'", "'hash'", "'today'"):
        assert again.split(key)[1][:40] == seen[0].split(key)[1][:40], key


@pytest.mark.parametrize("which", ["traffic", "grader"])
def test_probe_runs_see_the_same_clock_and_streams_every_time(which: str) -> None:
    runner = default_traffic_runner() if which == "traffic" else default_grader_runner()
    seen = [
        runner.observe({PROBE_PATH: SOURCES.encode(), f"pad_{n}.py": b""}, PROBE_PATH, ["readings"])
        for n in range(2)
    ]
    assert all(r.status == "completed" for r in seen), seen
    assert seen[0].observation("readings") == seen[1].observation("readings")
