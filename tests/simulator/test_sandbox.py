"""Behaviour of the sandboxed test runners: outcomes, collection, ordering, caching, lifecycle.

Every test here really runs code in the sandbox helper; nothing of the sandbox is mocked.
Escape attempts and concurrency live in test_sandbox_isolation.py.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Collection, Iterator, Mapping, Sequence
from pathlib import Path

import pytest

import metasre.simulator.sandbox as sandbox
from metasre.simulator.sandbox.helper.isolation import CAP_SETUID, has_capabilities

CAN_SWITCH_UID = os.geteuid() == 0 and has_capabilities(CAP_SETUID)

RANKER = b"""\
def score(ad):
    return ad["bid"] * ad["ctr"]


def rank(ads):
    return sorted(ads, key=score, reverse=True)
"""

TEST_RANKER = b"""\
import asyncio

from ad_ranking.ranker import rank, score

ADS = [{"id": "a", "bid": 1.0, "ctr": 0.5}, {"id": "b", "bid": 2.0, "ctr": 0.5}]


def test_rank_orders_by_score():
    assert [ad["id"] for ad in rank(ADS)] == ["b", "a"]


def test_score_is_wrong_on_purpose():
    assert score(ADS[0]) == 3


def test_lookup_raises():
    {}["missing"]


async def test_async_rank():
    await asyncio.sleep(0)
    assert rank([]) == []


class TestScore:
    def setup_method(self, method):
        self.ad = {"bid": 2.0, "ctr": 0.25}

    def test_positive(self):
        assert score(self.ad) == 0.5

    def test_fresh_instance(self):
        assert not hasattr(self, "seen")
        self.seen = True
"""

EXPECTED_IDS = (
    "tests/unit/test_ranker.py::test_rank_orders_by_score",
    "tests/unit/test_ranker.py::test_score_is_wrong_on_purpose",
    "tests/unit/test_ranker.py::test_lookup_raises",
    "tests/unit/test_ranker.py::test_async_rank",
    "tests/unit/test_ranker.py::TestScore::test_positive",
    "tests/unit/test_ranker.py::TestScore::test_fresh_instance",
)


def suite(changes: Mapping[str, bytes] | None = None) -> dict[str, bytes]:
    files = {
        "ad_ranking/__init__.py": b"",
        "ad_ranking/ranker.py": RANKER,
        "tests/unit/test_ranker.py": TEST_RANKER,
    }
    files.update(changes or {})
    return files


@pytest.fixture(scope="module")
def runner() -> Iterator[sandbox.ForkServerRunner]:
    with sandbox.ForkServerRunner() as fork_server:
        yield fork_server


def run_one(
    runner: sandbox.TestRunner, source: str, limits: sandbox.SandboxLimits | None = None
) -> sandbox.RunReport:
    return runner.run({"tests/test_x.py": source.encode()}, ["tests/test_x.py"], limits=limits)


def test_public_names_are_pinned() -> None:
    assert sandbox.__all__ == sorted(sandbox.__all__)
    assert set(sandbox.__all__) == {
        "CachingRunner",
        "ForkServerRunner",
        "InvalidRunRequestError",
        "Isolation",
        "OutcomeStatus",
        "ProbeReport",
        "ProbeRunner",
        "RunReport",
        "RunStatus",
        "RunnerClosedError",
        "RunnerStartError",
        "RunnerState",
        "SandboxError",
        "SandboxLimits",
        "SubprocessRunner",
        "TestOutcome",
        "TestRunner",
        "WeakIsolationError",
        "WrongRunnerError",
        "allow_weak_isolation",
        "default_grader_runner",
        "default_runner",
        "default_traffic_runner",
        "isolation",
    }


def test_pass_fail_and_error_outcomes(runner: sandbox.ForkServerRunner) -> None:
    report = runner.run(suite(), ["tests/unit/test_ranker.py"])

    assert report.status == "completed"
    assert report.message == ""
    assert not report.cached
    assert tuple(o.test_id for o in report.outcomes) == EXPECTED_IDS
    assert (report.passed, report.failed, report.errors) == (4, 1, 1)
    assert not report.ok

    failed = report.outcome("tests/unit/test_ranker.py::test_score_is_wrong_on_purpose")
    assert failed is not None
    assert failed.status == "failed"
    assert failed.message == "AssertionError: assert score(ADS[0]) == 3"
    assert 'File "tests/unit/test_ranker.py", line 13, in test_score_is_wrong_on_purpose' in (
        failed.traceback
    )

    errored = report.outcome("tests/unit/test_ranker.py::test_lookup_raises")
    assert errored is not None
    assert (errored.status, errored.message) == ("error", "KeyError: 'missing'")

    passed = report.outcome("tests/unit/test_ranker.py::test_async_rank")
    assert passed == sandbox.TestOutcome(passed.test_id, "passed", "", "")
    assert report.outcome("tests/unit/test_ranker.py::test_nope") is None


def test_tracebacks_show_paths_relative_to_the_run_folder(
    runner: sandbox.ForkServerRunner,
) -> None:
    broken = RANKER.replace(b'return ad["bid"] * ad["ctr"]', b'return ad["bid"] / 0')
    report = runner.run(suite({"ad_ranking/ranker.py": broken}), ["tests/unit/test_ranker.py"])

    outcome = report.outcome("tests/unit/test_ranker.py::test_rank_orders_by_score")
    assert outcome is not None
    assert outcome.message == "ZeroDivisionError: float division by zero"
    assert 'File "ad_ranking/ranker.py", line 2, in score' in outcome.traceback
    for text in (outcome.traceback, report.output, report.message):
        assert "/dev/shm" not in text
        assert "metasre-sandbox" not in text
        assert "child.py" not in text and "minitest.py" not in text


def test_async_failures_and_unittest_classes(runner: sandbox.ForkServerRunner) -> None:
    report = run_one(
        runner,
        "import asyncio, unittest\n"
        "async def test_async_fails():\n"
        "    await asyncio.sleep(0)\n"
        "    assert 1 == 2, 'one is not two'\n"
        "class CheckoutCase(unittest.TestCase):\n"
        "    def setUp(self):\n"
        "        self.total = 3\n"
        "    def test_total(self):\n"
        "        self.assertEqual(self.total, 3)\n"
        "    def test_total_wrong(self):\n"
        "        self.assertEqual(self.total, 4)\n"
        "class TestSkippedByFlag:\n"
        "    __test__ = False\n"
        "    def test_never(self):\n"
        "        raise RuntimeError\n",
    )

    assert [(o.test_id, o.status) for o in report.outcomes] == [
        ("tests/test_x.py::test_async_fails", "failed"),
        ("tests/test_x.py::CheckoutCase::test_total", "passed"),
        ("tests/test_x.py::CheckoutCase::test_total_wrong", "failed"),
    ]
    assert report.outcomes[0].message == "AssertionError: one is not two"
    assert report.outcomes[2].message == "AssertionError: 3 != 4"


def test_each_async_test_gets_a_fresh_loop_and_leaves_nothing_behind(
    runner: sandbox.ForkServerRunner,
) -> None:
    # What asyncio.run guarantees between two tests, which the runner's cheaper loop keeps:
    # pending tasks cancelled, async generators finalised, executor threads stopped, the
    # loop closed and unset, and a new one for the next test.
    report = run_one(
        runner,
        "import asyncio, threading\n"
        "LEFT = {}\n"
        "async def _forever():\n"
        "    try:\n"
        "        await asyncio.sleep(3600)\n"
        "    finally:\n"
        "        LEFT['task cleaned up'] = True\n"
        "async def _numbers():\n"
        "    try:\n"
        "        yield 1\n"
        "        yield 2\n"
        "    finally:\n"
        "        LEFT['generator closed'] = True\n"
        "async def test_first_leaves_work_behind():\n"
        "    LEFT['loop'] = asyncio.get_running_loop()\n"
        "    LEFT['task'] = asyncio.ensure_future(_forever())\n"
        "    LEFT['generator'] = _numbers()\n"
        "    assert await LEFT['generator'].__anext__() == 1\n"
        "    assert await asyncio.to_thread(threading.active_count) == 2\n"
        "async def test_second_finds_it_cleaned_up():\n"
        "    assert asyncio.get_running_loop() is not LEFT['loop']\n"
        "    assert LEFT['loop'].is_closed()\n"
        "    assert LEFT['task'].cancelled() and LEFT['task cleaned up']\n"
        "    assert LEFT['generator closed']\n"
        "    assert threading.active_count() == 1\n"
        "def test_no_loop_is_left_running_or_set():\n"
        "    assert asyncio.events._get_running_loop() is None\n"
        "    assert asyncio.get_event_loop_policy()._local._loop is None\n"
        "async def test_a_failure_still_cleans_up():\n"
        "    asyncio.ensure_future(_forever())\n"
        "    raise KeyError('k')\n"
        "def test_after_a_failure():\n"
        "    assert asyncio.events._get_running_loop() is None\n"
        "    assert asyncio.get_event_loop_policy()._local._loop is None\n",
    )

    assert report.status == "completed", report.message
    assert [(o.test_id.split("::")[1], o.status, o.message) for o in report.outcomes] == [
        ("test_first_leaves_work_behind", "passed", ""),
        ("test_second_finds_it_cleaned_up", "passed", ""),
        ("test_no_loop_is_left_running_or_set", "passed", ""),
        ("test_a_failure_still_cleans_up", "error", "KeyError: 'k'"),
        ("test_after_a_failure", "passed", ""),
    ]


def test_a_syntax_error_is_a_collection_error_naming_file_and_line(
    runner: sandbox.ForkServerRunner,
) -> None:
    broken = RANKER.replace(b"def rank(ads):", b"def rank(ads:")
    files = suite(
        {
            "ad_ranking/ranker.py": broken,
            "tests/unit/test_other.py": b"def test_other():\n    assert True\n",
        }
    )

    report = runner.run(files, ["tests/unit/test_ranker.py", "tests/unit/test_other.py"])

    assert report.status == "collection_error"
    assert report.message.startswith("import of tests/unit/test_ranker.py failed: SyntaxError")
    assert "(ad_ranking/ranker.py, line 5)" in report.message
    # the other module still ran, and the collection traceback is in the output
    assert [o.test_id for o in report.outcomes] == ["tests/unit/test_other.py::test_other"]
    assert "[collection error in tests/unit/test_ranker.py]" in report.output
    assert not report.ok


def test_an_exception_at_import_is_a_collection_error(runner: sandbox.ForkServerRunner) -> None:
    report = run_one(runner, "CONFIG = {}\nLIMIT = CONFIG['limit']\n\ndef test_x():\n    pass\n")

    assert report.status == "collection_error"
    assert report.message == (
        "import of tests/test_x.py failed: KeyError: 'limit' (tests/test_x.py, line 2)"
    )
    assert report.outcomes == ()


def test_ids_follow_file_order_then_definition_order(runner: sandbox.ForkServerRunner) -> None:
    files = {
        "tests/test_a.py": b"def test_zeta():\n    pass\n\ndef test_alpha():\n    pass\n",
        "tests/test_b.py": b"class TestB:\n    def test_y(self):\n        pass\n"
        b"    def test_b(self):\n        pass\n\ndef test_m():\n    pass\n",
    }

    report = runner.run(files, ["tests/test_b.py", "tests/test_a.py"])

    assert [o.test_id for o in report.outcomes] == [
        "tests/test_b.py::TestB::test_y",
        "tests/test_b.py::TestB::test_b",
        "tests/test_b.py::test_m",
        "tests/test_a.py::test_zeta",
        "tests/test_a.py::test_alpha",
    ]


def test_output_is_captured_in_order(runner: sandbox.ForkServerRunner) -> None:
    report = run_one(
        runner,
        "import sys\n"
        "print('at import')\n"
        "def test_one():\n"
        "    print('out one')\n"
        "    print('err one', file=sys.stderr)\n"
        "def test_two():\n"
        "    print('out two')\n",
    )

    assert report.ok
    assert report.output == "at import\nout one\nerr one\nout two\n"


def test_the_tests_see_an_empty_environment_and_only_the_stdlib(
    runner: sandbox.ForkServerRunner,
) -> None:
    report = run_one(
        runner,
        "import os, sys, tempfile\n"
        "def test_environment():\n"
        # TZ=UTC: the fixed clock's zone (helper/determinism.py)
        "    assert set(os.environ) <= {'TMPDIR', 'TZ'}, dict(os.environ)\n"
        "def test_cwd_is_the_run_folder():\n"
        "    assert sys.path[0] == os.getcwd()\n"
        "    assert os.path.exists('tests/test_x.py')\n"
        "    assert tempfile.gettempdir().startswith(os.getcwd())\n"
        "def test_no_site_packages():\n"
        "    assert not [p for p in sys.path if 'site-packages' in p], sys.path\n"
        "def test_project_not_importable():\n"
        "    try:\n"
        "        import metasre\n"
        "    except ImportError:\n"
        "        return\n"
        "    raise AssertionError('metasre is importable')\n"
        "def test_pytest_not_importable():\n"
        "    try:\n"
        "        import pytest\n"
        "    except ImportError:\n"
        "        return\n"
        "    raise AssertionError('pytest is importable')\n",
    )

    assert report.ok, report.outcomes


def test_reports_are_deterministic(runner: sandbox.ForkServerRunner) -> None:
    first = runner.run(suite(), ["tests/unit/test_ranker.py"])
    second = runner.run(suite(), ["tests/unit/test_ranker.py"])

    assert first == second


@pytest.mark.parametrize(
    ("files", "test_files", "fragment"),
    [
        ({"/abs.py": b""}, ["/abs.py"], "normalised relative POSIX path"),
        ({"a/../b.py": b""}, ["a/../b.py"], "normalised relative POSIX path"),
        ({"../b.py": b""}, ["../b.py"], "normalised relative POSIX path"),
        ({"a\\b.py": b""}, ["a\\b.py"], "normalised relative POSIX path"),
        ({"tests/t.py": b""}, ["tests/missing.py"], "not among the files"),
        ({"tests/t.py": "text"}, ["tests/t.py"], "must be bytes"),
        ({"tests/t.py": b""}, "tests/t.py", "not one str"),
        ({"a": b"", "a/b.py": b""}, ["a/b.py"], "both a file and a folder"),
    ],
    ids=[
        "absolute",
        "dotdot-inside",
        "dotdot-leading",
        "backslash",
        "missing",
        "text",
        "str",
        "file-and-folder",
    ],
)
def test_invalid_requests_raise(
    runner: sandbox.ForkServerRunner,
    files: Mapping[str, bytes],
    test_files: Sequence[str],
    fragment: str,
) -> None:
    with pytest.raises(sandbox.InvalidRunRequestError, match=fragment):
        runner.run(files, test_files)


def test_limits_are_validated() -> None:
    with pytest.raises(ValueError, match="cpu_seconds must be a positive int"):
        sandbox.SandboxLimits(cpu_seconds=0)
    with pytest.raises(ValueError, match="wall_timeout_s must be > 0"):
        sandbox.SandboxLimits(wall_timeout_s=0)


class CountingRunner:
    """A real runner that counts how often it is asked to run."""

    def __init__(self, inner: sandbox.TestRunner) -> None:
        self.inner = inner
        self.calls = 0
        self.closed = False

    def run(
        self,
        files: Mapping[str, bytes],
        test_files: Sequence[str],
        *,
        limits: sandbox.SandboxLimits | None = None,
        shared: Collection[str] = (),
    ) -> sandbox.RunReport:
        self.calls += 1
        return self.inner.run(files, test_files, limits=limits, shared=shared)

    def close(self) -> None:
        self.closed = True


def test_caching_returns_the_same_report_marked_cached(runner: sandbox.ForkServerRunner) -> None:
    counting = CountingRunner(runner)
    caching = sandbox.CachingRunner(counting)

    first = caching.run(suite(), ["tests/unit/test_ranker.py"])
    second = caching.run(suite(), ["tests/unit/test_ranker.py"])

    assert (first.cached, second.cached) == (False, True)
    assert dataclasses.replace(second, cached=False) == first
    assert counting.calls == 1
    assert (caching.hits, caching.misses, len(caching)) == (1, 1, 1)


def test_changed_content_or_limits_miss_the_cache(runner: sandbox.ForkServerRunner) -> None:
    counting = CountingRunner(runner)
    caching = sandbox.CachingRunner(counting)
    fixed = RANKER.replace(b'ad["bid"] * ad["ctr"]', b'ad["bid"] * ad["ctr"] + 2.5')

    caching.run(suite(), ["tests/unit/test_ranker.py"])
    changed = caching.run(suite({"ad_ranking/ranker.py": fixed}), ["tests/unit/test_ranker.py"])
    relimited = caching.run(
        suite(), ["tests/unit/test_ranker.py"], limits=sandbox.SandboxLimits(cpu_seconds=3)
    )

    assert not changed.cached and not relimited.cached
    assert counting.calls == 3
    outcome = changed.outcome("tests/unit/test_ranker.py::test_score_is_wrong_on_purpose")
    assert outcome is not None and outcome.status == "passed"


def test_timeouts_are_not_cached(runner: sandbox.ForkServerRunner) -> None:
    counting = CountingRunner(runner)
    caching = sandbox.CachingRunner(counting)
    limits = sandbox.SandboxLimits(wall_timeout_s=0.2)
    files = {"tests/test_x.py": b"def test_spin():\n    while True:\n        pass\n"}

    assert caching.run(files, ["tests/test_x.py"], limits=limits).status == "timeout"
    assert caching.run(files, ["tests/test_x.py"], limits=limits).cached is False
    assert counting.calls == 2


def test_identical_runs_in_flight_run_once(runner: sandbox.ForkServerRunner) -> None:
    counting = CountingRunner(runner)
    caching = sandbox.CachingRunner(counting)
    files = {"tests/test_x.py": b"import time\ndef test_slowish():\n    time.sleep(0.2)\n"}
    reports: list[sandbox.RunReport] = []

    def run() -> None:
        reports.append(caching.run(files, ["tests/test_x.py"]))

    threads = [threading.Thread(target=run) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert counting.calls == 1
    assert sorted(r.cached for r in reports) == [False, True, True]
    assert all(r.ok for r in reports)


def test_caching_runner_closes_the_runner_it_wraps(runner: sandbox.ForkServerRunner) -> None:
    counting = CountingRunner(runner)
    with sandbox.CachingRunner(counting):
        pass
    assert counting.closed


def test_subprocess_runner_agrees_with_the_fork_server(runner: sandbox.ForkServerRunner) -> None:
    cases = [
        (suite(), ["tests/unit/test_ranker.py"]),
        (suite({"ad_ranking/ranker.py": b"def score(:\n"}), ["tests/unit/test_ranker.py"]),
    ]
    with sandbox.SubprocessRunner() as fresh:
        for files, test_files in cases:
            assert fresh.run(files, test_files) == runner.run(files, test_files)


def test_lifecycle_and_calls_out_of_order() -> None:
    fork_server = sandbox.ForkServerRunner()
    assert fork_server.state is sandbox.RunnerState.NEW
    assert fork_server.helper_pid is None
    fork_server.start()
    assert fork_server.state is sandbox.RunnerState.RUNNING
    assert fork_server.helper_pid is not None
    assert any("audit hook" in layer for layer in fork_server.isolation)
    fork_server.close()
    fork_server.close()
    assert fork_server.state is sandbox.RunnerState.CLOSED
    with pytest.raises(sandbox.RunnerClosedError, match="was closed"):
        fork_server.run(suite(), ["tests/unit/test_ranker.py"])

    fresh = sandbox.SubprocessRunner()
    fresh.close()
    with pytest.raises(sandbox.RunnerClosedError, match="was closed"):
        fresh.run(suite(), ["tests/unit/test_ranker.py"])


def test_closing_removes_the_helper_and_its_folders() -> None:
    fork_server = sandbox.ForkServerRunner()
    fork_server.start()
    base, pid = fork_server._base_dir, fork_server.helper_pid
    assert base is not None and os.path.isdir(base) and pid is not None
    fork_server.close()
    assert not os.path.exists(base)
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # already reaped by close()


def test_set_order_is_the_same_in_every_helper(runner: sandbox.ForkServerRunner) -> None:
    source = "def test_order():\n    print(list({'alpha', 'beta', 'gamma', 'delta', 'eps'}))\n"
    with sandbox.SubprocessRunner() as fresh:
        assert run_one(fresh, source).output == run_one(runner, source).output


def test_runs_start_the_helper_lazily() -> None:
    with sandbox.ForkServerRunner() as fork_server:
        assert fork_server.state is sandbox.RunnerState.NEW
        assert fork_server.run(suite(), ["tests/unit/test_ranker.py"]).passed == 4
        assert fork_server.state is sandbox.RunnerState.RUNNING


def test_default_runner_is_one_shared_caching_runner() -> None:
    shared = sandbox.default_runner()
    assert shared is sandbox.default_runner()
    assert isinstance(shared, sandbox.CachingRunner)


@pytest.mark.skipif(not CAN_SWITCH_UID, reason="uid switching needs root with CAP_SETUID")
def test_as_root_each_run_gets_an_unprivileged_uid(runner: sandbox.ForkServerRunner) -> None:
    report = run_one(
        runner,
        "import os\n"
        "def test_not_root():\n"
        "    assert os.getuid() != 0 and os.geteuid() != 0\n"
        "    assert os.stat('.').st_uid == os.getuid()\n"
        "    assert os.stat('.').st_mode & 0o777 == 0o700\n",
    )
    assert report.ok, report.outcomes
    assert any("uid per run" in layer for layer in runner.isolation)


def test_the_helper_package_is_stdlib_only() -> None:
    """The helper's code imports nothing but the standard library and itself.

    Booted the way the helper boots it: no site-packages, so no metasre.
    """
    import json
    import subprocess
    import sys

    from metasre.simulator.sandbox import _host

    helper = Path(_host.HELPER_DIR)
    modules = sorted(
        str(p.relative_to(helper).with_suffix("")).replace("/", ".")
        for p in helper.rglob("*.py")
        if p.name != "__init__.py"
    )
    script = (
        "import importlib, json, sys, sysconfig, types\n"
        "p = types.ModuleType('_metasre_sandbox'); p.__path__ = [sys.argv[1]]\n"
        "sys.modules['_metasre_sandbox'] = p\n"
        "for name in sys.argv[2:]:\n"
        "    importlib.import_module('_metasre_sandbox.' + name)\n"
        "stdlib = sysconfig.get_paths()['stdlib']\n"
        "foreign = sorted(n for n, m in sys.modules.items() if getattr(m, '__file__', None)\n"
        "                 and not m.__file__.startswith((stdlib, sys.argv[1])))\n"
        "print(json.dumps(foreign))\n"
    )
    done = subprocess.run(
        [sys.executable, "-P", "-s", "-S", "-c", script, str(helper), *modules],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout) == []
    assert "server" in modules and "accel.codegen" in modules
