"""Benchmark of the sandboxed test runners: cold and cached runs, fork server vs fresh python.

Usage: python bench/bench_sandbox.py [--runs N]

A "cold" run is a run the cache has never seen: every iteration edits one module of the
service, as an agent would between two test runs, so the CachingRunner misses and only the
edited file needs compiling. ForkServerRunner and SubprocessRunner are measured side by side,
interleaved in the same loop, so machine load affects both alike.
"""

from __future__ import annotations

import argparse
import os
import statistics
import threading
import time
from collections.abc import Callable

from metasre.simulator.sandbox import (
    CachingRunner,
    ForkServerRunner,
    SubprocessRunner,
    TestRunner,
)

SERVICE = {
    "svc/__init__.py": "",
    "svc/config.py": "DEFAULTS = {'floor': 0.1, 'boost': 1.5, 'max_ads': 3}\n"
    "def get(key):\n    return DEFAULTS[key]\n",
    "svc/models.py": "from dataclasses import dataclass\n\n@dataclass(frozen=True)\n"
    "class Ad:\n    id: str\n    bid: float\n    ctr: float\n    premium: bool = False\n",
    "svc/pricing.py": "from svc import config\n\n"
    "def price(ad):\n    base = max(ad.bid, config.get('floor'))\n"
    "    return base * (config.get('boost') if ad.premium else 1.0)\n",
    "svc/scoring.py": "from svc.pricing import price\n\n"
    "def score(ad):\n    return round(price(ad) * ad.ctr, 6)\n",
    "svc/ranker.py": "from svc import config\nfrom svc.scoring import score\n\n"
    "def rank(ads):\n    ordered = sorted(ads, key=lambda a: (-score(a), a.id))\n"
    "    return ordered[: config.get('max_ads')]\n",
    "svc/storage.py": "import json\n\nclass Store:\n    def __init__(self):\n"
    "        self._rows = {}\n    def put(self, key, value):\n"
    "        self._rows[key] = json.dumps(value)\n    def get(self, key):\n"
    "        return json.loads(self._rows[key])\n",
    "svc/util.py": "import re\n\nSLUG = re.compile(r'[^a-z0-9]+')\n\n"
    "def slug(text):\n    return SLUG.sub('-', text.lower()).strip('-')\n",
}

SYNC_TESTS = """\
from svc.models import Ad
from svc.ranker import rank
from svc.scoring import score
from svc.storage import Store
from svc.util import slug

ADS = [Ad("a", 1.0, 0.5), Ad("b", 2.0, 0.5, premium=True), Ad("c", 0.05, 0.9)]


def test_rank_prefers_premium():
    assert [a.id for a in rank(ADS)][0] == "b"


def test_floor_applies():
    assert score(ADS[2]) == 0.09


def test_rank_is_capped():
    assert len(rank(ADS * 3)) == 3


def test_store_round_trip():
    store = Store()
    store.put("k", {"x": 1})
    assert store.get("k") == {"x": 1}


def test_slug():
    assert slug("Hello, World!") == "hello-world"
"""

ASYNC_TESTS = SYNC_TESTS.replace(
    "def test_store_round_trip():\n    store = Store()",
    "async def test_store_round_trip():\n    await asyncio.sleep(0)\n    store = Store()",
).replace("from svc.models import Ad", "import asyncio\n\nfrom svc.models import Ad")

TEST_FILE = "tests/unit/test_ranking.py"

# A service shaped like the scenarios' (postponed annotations, slotted frozen dataclasses, an
# enum, a protocol, a named tuple, an async repository) and a 20-test suite with failures:
# the shape whose import cost the fork server's caches of generated code and bytecode target.
SERVICE_DC = {
    "shop/__init__.py": "from shop.models import Ad, Kind, Ranked\nfrom shop.repo import Repo\n",
    "shop/models.py": "from __future__ import annotations\n\n"
    "import enum\nfrom dataclasses import dataclass, field\nfrom typing import NamedTuple\n\n"
    "class Kind(enum.Enum):\n    SEARCH = 'search'\n    FEED = 'feed'\n\n"
    + "".join(
        f"@dataclass(frozen=True, slots=True)\nclass {name}:\n"
        + "".join(f"    {f}: {t}\n" for f, t in fields)
        + "\n"
        for name, fields in (
            ("Ad", [("ad_id", "str"), ("bid", "float"), ("ctr", "float = 0.01")]),
            ("Ranked", [("ad_id", "str"), ("score", "float"), ("slot", "int = 0")]),
            ("Click", [("ad_id", "str"), ("at", "int"), ("user", "str = ''")]),
            ("Conversion", [("click", "Click"), ("value", "float"), ("currency", "str = 'USD'")]),
            ("Budget", [("daily", "float"), ("spent", "float = 0.0")]),
            ("Request", [("kind", "Kind"), ("ads", "tuple[Ad, ...] = ()")]),
        )
    )
    + "class Window(NamedTuple):\n    start: int\n    end: int\n\n"
    "@dataclass\nclass Report:\n    ranked: list[Ranked] = field(default_factory=list)\n",
    "shop/repo.py": "from __future__ import annotations\n\n"
    "import asyncio\nfrom contextlib import asynccontextmanager\n"
    "from typing import Any, AsyncIterator, Protocol\n\n"
    "class Conn(Protocol):\n    async def fetch(self, key: str) -> Any: ...\n\n"
    "class Repo:\n    def __init__(self, conn: Conn) -> None:\n"
    "        self._conn, self.open = conn, 0\n\n"
    "    @asynccontextmanager\n    async def session(self) -> AsyncIterator[Conn]:\n"
    "        self.open += 1\n        try:\n            yield self._conn\n"
    "        finally:\n            self.open -= 1\n\n"
    "    async def get(self, key: str) -> Any:\n"
    "        async with self.session() as conn:\n            return await conn.fetch(key)\n",
    "shop/rank.py": "from shop.models import Ad, Ranked\n\n"
    "def rank(ads, limit=3):\n"
    "    scored = sorted(ads, key=lambda a: (-a.bid * a.ctr, a.ad_id))\n"
    "    top = enumerate(scored[:limit])\n"
    "    return [Ranked(a.ad_id, round(a.bid * a.ctr, 6), i) for i, a in top]\n",
}
DC_TESTS = (
    "import asyncio\n\nimport pytest_free\n"
    "from shop import Ad, Kind, Ranked, Repo\nfrom shop.models import Budget, Window\n"
    "from shop.rank import rank\n\n"
    "class Conn:\n    async def fetch(self, key):\n        await asyncio.sleep(0)\n"
    "        return {'k': 1}.get(key)\n\n"
    + "".join(
        f"def test_rank_{i}():\n"
        f"    ads = [Ad(f'a{{j}}', 1.0 + j, 0.1) for j in range({i + 3})]\n"
        f"    assert [r.slot for r in rank(ads)] == [0, 1, 2]\n\n"
        for i in range(10)
    )
    + "".join(
        f"async def test_repo_{i}():\n    repo = Repo(Conn())\n"
        f"    assert await repo.get('k') == 1 and repo.open == 0\n\n"
        for i in range(5)
    )
    + "".join(
        f"def test_failing_{i}():\n    assert Budget(10.0).spent == {i + 1}, Window(0, {i})\n\n"
        for i in range(4)
    )
    + "def test_kind():\n    assert Kind('feed') is Kind.FEED\n"
)
DC_TEST_FILE = "tests/unit/test_shop.py"


def files_for(tests: str, edit: int) -> dict[str, bytes]:
    if tests is DC_TESTS:
        files = {path: text.encode() for path, text in SERVICE_DC.items()}
        files["pytest_free.py"] = f"LAST_EDIT = {edit}\n".encode()
        files[DC_TEST_FILE] = tests.encode()
        return files
    files = {path: text.encode() for path, text in SERVICE.items()}
    # an agent's edit between runs: only this file changes (and needs compiling)
    files["svc/pricing.py"] += f"\nLAST_EDIT = {edit}\n".encode()
    files[TEST_FILE] = tests.encode()
    files["tests/unit/conftest_notes.txt"] = b"fixtures live in the tests themselves\n"
    return files


def suite_of(tests: str) -> tuple[list[str], int]:
    """The test files to run and how many tests pass."""
    return ([DC_TEST_FILE], 16) if tests is DC_TESTS else ([TEST_FILE], 5)


def timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return (time.perf_counter() - start) * 1000


def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]


def check(runner: TestRunner, tests: str, edit: int) -> None:
    test_files, passing = suite_of(tests)
    report = runner.run(files_for(tests, edit), test_files)
    if report.status != "completed" or report.passed != passing:
        raise SystemExit(f"benchmark suite did not pass: {report.status} {report.message}")


def cold(
    fork: ForkServerRunner, fresh: SubprocessRunner, tests: str, runs: int, edit0: int
) -> tuple[list[float], list[float]]:
    fork_ms: list[float] = []
    fresh_ms: list[float] = []
    for i in range(runs):
        fork_ms.append(timed(lambda i=i: check(fork, tests, edit0 + i)))
        if i % 3 == 0:  # the baseline is ~15x slower; sample it a third as often
            fresh_ms.append(timed(lambda i=i: check(fresh, tests, edit0 + i)))
    return fork_ms, fresh_ms


def paced(fork: ForkServerRunner, tests: str, runs: int, edit0: int, gap_s: float) -> list[float]:
    result = []
    for i in range(runs):
        time.sleep(gap_s)  # an agent thinks between tool calls; the helper uses the gap
        result.append(timed(lambda i=i: check(fork, tests, edit0 + i)))
    return result


def cached(runner: CachingRunner, tests: str, runs: int) -> list[float]:
    files = files_for(tests, -1)
    check(runner, tests, -1)
    result = []
    for _ in range(runs):
        start = time.perf_counter()
        report = runner.run(files, suite_of(tests)[0])
        result.append((time.perf_counter() - start) * 1e6)
        assert report.cached
    return result


def throughput(fork: ForkServerRunner, threads: int, per_thread: int, edit0: int) -> float:
    def work(offset: int) -> None:
        for i in range(per_thread):
            check(fork, SYNC_TESTS, edit0 + offset * per_thread + i)

    workers = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
    start = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return threads * per_thread / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60, help="cold runs per suite (fork server)")
    args = parser.parse_args()

    with ForkServerRunner() as fork, SubprocessRunner() as fresh:
        start_ms = timed(fork.start)
        caching = CachingRunner(fork)
        check(fork, SYNC_TESTS, -2)  # warm the bytecode cache of the unchanged files
        rows = []
        check(fork, DC_TESTS, -2)  # the helper learns the code the dataclasses generate
        for name, tests, edit0 in (
            ("5 sync tests", SYNC_TESTS, 0),
            ("4 sync + 1 async", ASYNC_TESTS, 10**6),
            ("20, dataclass svc", DC_TESTS, 2 * 10**6),
        ):
            fork_ms, fresh_ms = cold(fork, fresh, tests, args.runs, edit0)
            paced_ms = paced(fork, tests, max(20, args.runs // 2), edit0 + 10**5, 0.02)
            cached_us = cached(caching, tests, 2000)
            rows.append((name, fork_ms, fresh_ms, paced_ms, cached_us))
        rates = {n: throughput(fork, n, 30 // n * 2, 10**7 * n) for n in (1, 2, 4)}
        layers = fork.isolation

    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"machine: {os.cpu_count()} CPUs, load average {load} (other work skews the numbers)")
    print(f"helper start-up (preload, warm-up, namespaces): {start_ms:.0f} ms")
    print(f"suites: {len(files_for(SYNC_TESTS, 0))} files with 5 tests, one module edited per run;")
    print(f"        {len(files_for(DC_TESTS, 0))} files with 20 tests (4 fail), 7 dataclasses\n")
    header = (
        f"{'suite':18} | {'fork median':>11} {'p90':>6} | {'subprocess median':>17} {'p90':>6}"
        f" | {'ratio':>5} | {'fork paced 20ms':>15} | {'cached median':>13}"
    )
    print(header)
    print("-" * len(header))
    for name, fork_ms, fresh_ms, paced_ms, cached_us in rows:
        ratio = statistics.median(fresh_ms) / statistics.median(fork_ms)
        print(
            f"{name:18} | {statistics.median(fork_ms):8.2f} ms {p90(fork_ms):6.2f}"
            f" | {statistics.median(fresh_ms):14.2f} ms {p90(fresh_ms):6.2f}"
            f" | {ratio:4.1f}x | {statistics.median(paced_ms):12.2f} ms"
            f" | {statistics.median(cached_us):10.1f} us"
        )
    print("\nconcurrent cold runs (fork server, default max_concurrency):")
    for threads, rate in rates.items():
        print(f"  {threads} thread(s): {rate:6.1f} runs/s")
    print("\nisolation layers:")
    for layer in layers:
        print(f"  - {layer}")


if __name__ == "__main__":
    main()
