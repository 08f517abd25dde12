"""Escape attempts against the sandbox, concurrency, and survival of crashing runs.

Each attempt must end as a failing run with a clear message and leave the host untouched.
"""

from __future__ import annotations

import os
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import metasre.simulator.sandbox as sandbox
from metasre.simulator.sandbox.helper.isolation import CAP_SETUID, has_capabilities

ROOT = os.geteuid() == 0
CAN_SWITCH_UID = ROOT and has_capabilities(CAP_SETUID)
CAN_UNSHARE = ROOT and has_capabilities(21)  # CAP_SYS_ADMIN


@pytest.fixture(scope="module")
def runner() -> Iterator[sandbox.ForkServerRunner]:
    with sandbox.ForkServerRunner() as fork_server:
        yield fork_server


def run_one(
    runner: sandbox.TestRunner, source: str, limits: sandbox.SandboxLimits | None = None
) -> sandbox.RunReport:
    return runner.run({"tests/test_x.py": source.encode()}, ["tests/test_x.py"], limits=limits)


def wait_until_gone(pid: int, timeout: float = 5.0) -> bool:
    """Wait for ``pid`` to exit, on its pidfd (an event, not a sleep)."""
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([pidfd], [], [], timeout)[0])
    finally:
        os.close(pidfd)


def sandbox_uid_processes(runner: sandbox.ForkServerRunner) -> list[int]:
    """Pids of live (non-zombie) processes running as one of ``runner``'s sandbox uids."""
    block = runner._uids
    assert block is not None
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            uid = os.stat(f"/proc/{entry}").st_uid
            with open(f"/proc/{entry}/stat", "rb") as handle:
                state = handle.read().rsplit(b")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        # an exited child stays a zombie until the helper reaps it; it runs nothing
        if block.first <= uid < block.first + 64 and state not in (b"Z", b"X"):
            found.append(int(entry))
    return found


def assert_serves(runner: sandbox.TestRunner) -> None:
    report = run_one(runner, "def test_fine():\n    assert 1 + 1 == 2\n")
    assert report.ok, (report.status, report.message)


def test_an_infinite_loop_hits_the_wall_limit(runner: sandbox.ForkServerRunner) -> None:
    report = run_one(
        runner,
        "def test_quick():\n    pass\n\ndef test_spin():\n    while True:\n        pass\n",
        sandbox.SandboxLimits(wall_timeout_s=0.5, cpu_seconds=30),
    )

    assert report.status == "timeout"
    assert report.message == (
        "tests ran past the 0.5 s wall limit and were stopped while running"
        " tests/test_x.py::test_spin"
    )
    assert [o.test_id for o in report.outcomes] == ["tests/test_x.py::test_quick"]
    assert_serves(runner)


def test_cpu_burning_code_hits_the_cpu_limit(runner: sandbox.ForkServerRunner) -> None:
    report = run_one(
        runner,
        "import signal\n"
        "signal.signal(signal.SIGXCPU, signal.SIG_IGN)\n"  # the hard limit still applies
        "def test_burn():\n    while True:\n        pass\n",
        sandbox.SandboxLimits(cpu_seconds=1, wall_timeout_s=10),
    )

    assert report.status == "timeout"
    assert report.message.startswith("tests used more than 1 s of CPU time and were stopped")


def test_a_fork_bomb_is_refused_and_leaves_no_process(runner: sandbox.ForkServerRunner) -> None:
    report = run_one(
        runner,
        "import os, threading, time\n"
        "def test_bomb():\n"
        "    print(os.getpid())\n"
        "    threading.Thread(target=time.sleep, args=(3600,)).start()\n"
        "    while True:\n"
        "        os.fork()\n",
    )

    assert report.status == "sandbox_violation"
    assert (
        report.message == "the tests tried to start a process (os.fork), which the sandbox forbids"
    )
    outcome = report.outcomes[0]
    assert outcome.status == "error"
    assert (
        outcome.message == "SandboxViolation: sandbox: starting processes is not allowed (os.fork)"
    )
    assert wait_until_gone(int(report.output.split()[0]))
    if CAN_SWITCH_UID:
        assert sandbox_uid_processes(runner) == []


@pytest.mark.parametrize(
    "attempt",
    [
        "import subprocess\n    subprocess.run(['/bin/sleep', '60'])",
        "import os\n    os.system('sleep 60')",
        "import os\n    os.execv('/bin/sleep', ['sleep', '60'])",
        "import os\n    os.posix_spawn('/bin/sleep', ['sleep', '60'], {})",
        "import _posixsubprocess",
    ],
    ids=["subprocess", "system", "exec", "posix_spawn", "posixsubprocess"],
)
def test_starting_programs_is_refused(runner: sandbox.ForkServerRunner, attempt: str) -> None:
    report = run_one(runner, f"import os\nprint(os.getpid())\ndef test_spawn():\n    {attempt}\n")

    assert report.status == "sandbox_violation"
    assert report.message.startswith("the tests tried to start a process")
    # the report can arrive while the child is still exiting
    assert wait_until_gone(int(report.output.split()[0]))
    if CAN_SWITCH_UID:
        assert sandbox_uid_processes(runner) == []


def test_a_huge_allocation_fails_inside_the_test(runner: sandbox.ForkServerRunner) -> None:
    report = run_one(runner, "def test_hog():\n    blob = bytearray(8 * 2**30)\n")

    assert report.status in ("completed", "crashed")
    if report.status == "completed":
        assert report.outcomes[0].message == "MemoryError"
    assert_serves(runner)


def test_writing_outside_the_run_folder_is_refused(
    runner: sandbox.ForkServerRunner, tmp_path: os.PathLike[str]
) -> None:
    target = os.path.join(os.fspath(tmp_path), "pwned.txt")
    report = run_one(
        runner,
        "def test_write():\n"
        f"    open({target!r}, 'w').write('owned')\n"
        "def test_write_inside_is_fine():\n"
        "    open('notes.txt', 'w').write('ok')\n"
        "    assert open('notes.txt').read() == 'ok'\n",
    )

    assert report.status == "sandbox_violation"
    assert report.message == (
        f"the tests tried to write outside the run folder ({target}), which the sandbox forbids"
    )
    assert report.outcomes[1].status == "passed"
    assert not os.path.exists(target)


def test_reading_host_files_is_refused(runner: sandbox.ForkServerRunner) -> None:
    report = run_one(runner, "def test_read():\n    print(open('/etc/passwd').read())\n")

    assert report.status == "sandbox_violation"
    assert "(/etc/passwd)" in report.message
    assert report.outcomes[0].message.startswith(
        "SandboxViolation: sandbox: reading outside the run folder and the standard library"
    )
    assert "root:" not in report.output


def test_the_parents_environment_is_unreadable(runner: sandbox.ForkServerRunner) -> None:
    report = run_one(
        runner,
        "import os\n"
        "def test_environ():\n"
        "    print(open(f'/proc/{os.getppid()}/environ', 'rb').read())\n",
    )

    assert report.status == "sandbox_violation"
    assert re.search(r"\(/proc/\d+/environ\)", report.message)


def test_another_runs_folder_is_unreadable(runner: sandbox.ForkServerRunner) -> None:
    # a neighbour as the fork server lays it out: a sibling folder owned by another run's uid
    base = runner._base_dir
    assert base is not None
    neighbour = os.path.join(base, "run-neighbour")
    os.mkdir(neighbour, 0o700)
    try:
        with open(os.path.join(neighbour, "hidden_check.py"), "w") as handle:
            handle.write("SECRET = 'grader answer'\n")
        if CAN_SWITCH_UID:
            os.chown(neighbour, 1_899_999_999, 1_899_999_999)
        report = run_one(
            runner,
            "def test_peek():\n    print(open('../run-neighbour/hidden_check.py').read())\n",
        )
    finally:
        os.remove(os.path.join(neighbour, "hidden_check.py"))
        os.rmdir(neighbour)

    assert report.status == "sandbox_violation"
    assert "run-neighbour/hidden_check.py" in report.message
    assert "grader answer" not in report.output


def test_no_connection_reaches_a_host_socket(runner: sandbox.ForkServerRunner) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.setblocking(False)
        port = server.getsockname()[1]
        report = run_one(
            runner,
            "import asyncio, socket\n"
            "def test_connect():\n"
            f"    socket.create_connection(('127.0.0.1', {port}), timeout=1)\n"
            "def test_raw_socket():\n"
            "    socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n"
            "async def test_asyncio_connect():\n"
            f"    await asyncio.open_connection('127.0.0.1', {port})\n"
            "async def test_asyncio_itself_still_works():\n"
            "    await asyncio.sleep(0)\n",
        )
        with pytest.raises(BlockingIOError):
            server.accept()

    assert report.status == "sandbox_violation"
    assert report.message.startswith("the tests tried to open a network connection")
    assert report.message.endswith("(and 2 more refused actions)")
    assert [o.status for o in report.outcomes] == ["error", "error", "error", "passed"]
    assert all("network access is not allowed" in o.message for o in report.outcomes[:3])


def test_ctypes_is_refused(runner: sandbox.ForkServerRunner) -> None:
    report = run_one(runner, "import ctypes\ndef test_poke():\n    ctypes.string_at(0)\n")

    assert report.status == "sandbox_violation"
    assert (
        report.message
        == "the tests tried to use ctypes (ctypes.string_at), which the sandbox forbids"
    )


def test_signalling_the_server_is_refused(runner: sandbox.ForkServerRunner) -> None:
    report = run_one(
        runner, "import os, signal\ndef test_kill():\n    os.kill(os.getppid(), signal.SIGKILL)\n"
    )

    assert report.status == "sandbox_violation"
    assert report.message.startswith("the tests tried to signal another process")
    assert_serves(runner)


def test_forging_the_report_channel_is_detected(runner: sandbox.ForkServerRunner) -> None:
    report = run_one(
        runner,
        "import os\n"
        "for fd in range(3, 32):\n"
        "    try:\n"
        "        os.write(fd, b'\\x00\\x00\\x00\\x02' + bytes(16) + b'{}')\n"
        "    except OSError:\n"
        "        pass\n"
        "def test_forged():\n"
        "    pass\n",
    )

    assert report.status == "sandbox_violation"
    assert report.message == (
        "the tests wrote to the sandbox's private report channel, which the sandbox forbids"
    )


def test_output_flooding_is_truncated(runner: sandbox.ForkServerRunner) -> None:
    report = run_one(
        runner,
        "import os\n"
        "def test_flood():\n"
        "    print('start')\n"
        "    print('x' * 100_000_000)\n"
        "    os.write(1, b'y' * 10_000_000)\n"
        "    print('end')\n",
    )

    assert report.ok
    assert len(report.output) < 10_000
    assert report.output.startswith("start\nxxx")
    assert re.search(r"\[\.\.\. \d+ bytes of output omitted \.\.\.\]", report.output)
    assert report.output.endswith("yyy\nend\n")


def test_oversized_files_fail_with_efbig(runner: sandbox.ForkServerRunner) -> None:
    report = run_one(runner, "def test_big():\n    open('big.bin', 'wb').write(bytes(4 * 2**20))\n")

    assert report.outcomes[0].message == "OSError: [Errno 27] File too large"


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (
            "import os\ndef test_exit():\n    os._exit(3)\n",
            "the test process exited with code 3 before reporting its results while running"
            " tests/test_x.py::test_exit",
        ),
        (
            "import os, signal\ndef test_die():\n    signal.raise_signal(signal.SIGSEGV)\n",
            "the test process was killed by SIGSEGV while running tests/test_x.py::test_die",
        ),
    ],
    ids=["os-exit", "segfault"],
)
def test_a_crashing_child_is_reported_and_the_runner_keeps_serving(
    runner: sandbox.ForkServerRunner, source: str, message: str
) -> None:
    report = run_one(runner, source)

    assert (report.status, report.message) == ("crashed", message)
    assert_serves(runner)


def test_the_runner_survives_its_helper_being_killed() -> None:
    with sandbox.ForkServerRunner() as fork_server:
        fork_server.start()
        pid = fork_server.helper_pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        assert wait_until_gone(pid)

        assert_serves(fork_server)
        assert fork_server.helper_pid not in (None, pid)


@pytest.mark.skipif(not CAN_SWITCH_UID, reason="uid switching needs root with CAP_SETUID")
def test_a_run_left_by_a_dead_holder_of_the_uid_block_is_killed_before_runs_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a runner killed with its runs going releases its block (the lock dies with it) while
    # the runs live on; the next holder of the block must not share uids with them
    from metasre.simulator.sandbox import _host

    held = _host.reserve_uid_block()
    assert held is not None
    leftover = subprocess.Popen(
        ["/bin/sleep", "600"], user=held.first + 7, group=held.first + 7, process_group=0
    )
    try:
        monkeypatch.setattr(_host, "reserve_uid_block", lambda: held)
        with sandbox.ForkServerRunner() as fork_server:
            fork_server.start()
            assert wait_until_gone(leftover.pid)
            assert_serves(fork_server)
    finally:
        leftover.kill()
        leftover.wait()
    assert leftover.returncode == -signal.SIGKILL


def test_concurrent_runs_from_four_threads_stay_independent(
    runner: sandbox.ForkServerRunner,
) -> None:
    def files_for(n: int) -> dict[str, bytes]:
        return {
            "svc/value.py": f"VALUE = {n}\n".encode(),
            "tests/test_value.py": (
                "import os\n"
                "from svc.value import VALUE\n"
                "def test_value():\n"
                f"    assert VALUE == {n}\n"
                "def test_parity():\n"
                "    assert VALUE % 2 == 0, f'{VALUE} is odd'\n"
                "def test_alone_in_folder():\n"
                "    assert os.listdir('svc') == ['value.py']\n"
            ).encode(),
        }

    results: dict[int, list[sandbox.RunReport]] = {n: [] for n in range(4)}

    def work(n: int) -> None:
        for _ in range(3):
            results[n].append(runner.run(files_for(n), ["tests/test_value.py"]))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    for n, reports in results.items():
        assert len(reports) == 3
        for report in reports:
            assert report.status == "completed"
            statuses = [o.status for o in report.outcomes]
            assert statuses == ["passed", "passed" if n % 2 == 0 else "failed", "passed"]


@pytest.mark.parametrize(
    "source",
    [
        "import os\ndef test_fork():\n    os.fork()\n",
        "def test_read():\n    open('/etc/hostname').read()\n",
        "def test_spin():\n    while True:\n        pass\n",
    ],
    ids=["fork", "read", "spin"],
)
def test_subprocess_runner_refuses_the_same_escapes(source: str) -> None:
    limits = sandbox.SandboxLimits(wall_timeout_s=0.5)
    with sandbox.SubprocessRunner() as fresh, sandbox.ForkServerRunner() as fork_server:
        fresh_report = run_one(fresh, source, limits)
        fork_report = run_one(fork_server, source, limits)

    assert fresh_report.status == fork_report.status != "completed"
    assert fresh_report.message == fork_report.message


@pytest.mark.skipif(not CAN_SWITCH_UID, reason="uid switching needs root with CAP_SETUID")
def test_as_root_the_os_layers_are_active(runner: sandbox.ForkServerRunner) -> None:
    layers = " | ".join(runner.isolation)
    assert "uid per run" in layers
    assert "seccomp" in layers
    assert "landlock" in layers
    # seccomp refuses every socket but a unix one, so the network cannot even be listed
    report = run_one(
        runner,
        "import socket\n"
        "def test_no_interfaces_visible():\n"
        "    try:\n"
        "        socket.if_nameindex()\n"
        "    except PermissionError:\n"
        "        return\n"
        "    raise AssertionError('the interfaces were listed')\n",
    )
    assert report.ok, report.outcomes


@pytest.mark.skipif(not CAN_UNSHARE, reason="namespaces need root with CAP_SYS_ADMIN")
def test_a_network_namespace_per_run_can_be_asked_for() -> None:
    with sandbox.ForkServerRunner(netns_per_run=True) as fork_server:
        report = run_one(
            fork_server,
            "import os\n"
            "def test_runs_in_its_own_network_namespace():\n"
            "    assert os.getpid() > 0\n",
        )
        assert any("one per run" in layer for layer in fork_server.isolation)
    assert report.ok, report.outcomes


def test_installed_packages_under_the_standard_library_are_not_readable(tmp_path: Path) -> None:
    """A wheel install (the Docker image) puts site-packages, with our hidden probes, inside
    the standard library's folder; Landlock grants that folder entry by entry instead."""
    from metasre.simulator.sandbox.helper import child

    stdlib = tmp_path / "lib" / "python3.11"
    (stdlib / "site-packages" / "metasre").mkdir(parents=True)
    (stdlib / "json").mkdir()
    (stdlib / "os.py").write_text("")
    plain = tmp_path / "lib-dynload"
    plain.mkdir()
    granted = child.without_packages([str(stdlib), str(plain)])
    assert granted == [str(stdlib / "json"), str(stdlib / "os.py"), str(plain)]
    (stdlib / "site-packages" / "metasre" / "probes.py").write_text("secret")
    (stdlib / "json" / "ok.py").write_text("fine")
    run = tmp_path / "run"
    run.mkdir()
    # the kernel alone, in a process of its own: no audit hook in the way
    script = (
        "import sys\n"
        "from metasre.simulator.sandbox.helper import child, landlock\n"
        f"landlock.restrict({str(run)!r}, child.without_packages([{str(stdlib)!r}]))\n"
        f"print(open({str(stdlib / 'json' / 'ok.py')!r}).read())\n"
        "try:\n"
        f"    open({str(stdlib / 'site-packages' / 'metasre' / 'probes.py')!r}).read()\n"
        "except PermissionError:\n"
        "    print('refused')\n"
    )
    if _landlock_abi() < 1:
        pytest.skip("this kernel has no Landlock")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.stdout.split() == ["fine", "refused"], done.stderr


def _landlock_abi() -> int:
    from metasre.simulator.sandbox.helper import landlock

    return landlock.abi_version()


def test_a_run_cannot_hold_its_slot_after_reporting_its_end() -> None:
    """Code that finds the runner's emit, reports the end early and spins is killed as soon as
    the caller has heard the end: the next run gets the only slot at once."""
    early_end = (
        "import sys\n"
        "def test_spin():\n"
        "    frame = sys._getframe()\n"
        "    while frame is not None and 'emit' not in frame.f_locals:\n"
        "        frame = frame.f_back\n"
        "    frame.f_locals['emit']({'t': 'end', 'status': 'completed', 'message': ''})\n"
        "    while True:\n"
        "        pass\n"
    )
    patient = sandbox.SandboxLimits(wall_timeout_s=60.0, cpu_seconds=60)
    with sandbox.ForkServerRunner(max_concurrency=1) as runner:
        first = run_one(runner, early_end, patient)
        assert first.status == "completed"
        started = time.monotonic()
        second = run_one(runner, "def test_quick():\n    pass\n", patient)
        waited = time.monotonic() - started
    assert second.ok
    assert waited < 30.0, f"the next run waited {waited:.1f} s for the spinning one's slot"


def test_removing_a_run_folder_never_changes_the_folder_that_holds_it(tmp_path: Path) -> None:
    """A removal that fails (here an immutable file; in life a race with another remover)
    unlocks what is inside the tree only: the folder holding it (``/dev/shm`` for the sandbox's
    base folders) keeps its mode, or every later run of a private uid would be locked out."""
    import shutil
    import stat

    from metasre.simulator.sandbox.helper.folders import remove_tree

    if shutil.which("chattr") is None or os.geteuid() != 0:
        pytest.skip("needs chattr and root to make a file nobody can remove")
    holder = tmp_path / "holder"
    stuck = holder / "base" / "run-1" / "stuck"
    stuck.parent.mkdir(parents=True)
    stuck.write_text("x")
    holder.chmod(0o1777)
    if subprocess.run(["chattr", "+i", str(stuck)], capture_output=True).returncode != 0:
        pytest.skip("this file system has no immutable flag")
    try:
        remove_tree(str(holder / "base"))
        assert stat.S_IMODE(holder.stat().st_mode) == 0o1777
    finally:
        subprocess.run(["chattr", "-i", str(stuck)], check=True)
    remove_tree(str(holder / "base"))
    assert not (holder / "base").exists()
