"""Issue 17, command line: mistakes, Ctrl-C, help, seeds, logs and the image, through `metasre`.

Every case runs the real entry point in a subprocess against a real server on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from metasre.cli.errors import ExitCode

# Under `pytest -n`: the module fixture `served` is one `metasre serve` for the client commands,
# so the tests that use it share one worker. The rest each start their own processes and run
# wherever a worker is free: as one group they were the suite's longest serial stretch (62 tests,
# 768 s of one worker's time at a load average of 11, against 29 s for the two that serve).
SERVED = pytest.mark.xdist_group("cli-served")

ROOT = Path(__file__).parent.parent
METASRE = (sys.executable, "-m", "metasre.cli.main")


def run(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 300
):
    return subprocess.run(
        [*METASRE, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=cwd,
        env=env,
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield int(s.getsockname()[1])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real `metasre serve` (with an admin token) for the client commands."""
    env = {**os.environ, "METASRE_ADMIN_TOKEN": "tok-en"}
    with subprocess.Popen(
        [*METASRE, "serve", "--port", "0", "--no-store"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=tmp_path_factory.mktemp("served"),
    ) as proc:
        assert proc.stdout is not None
        address = json.loads(proc.stdout.readline())["address"]
        try:
            yield address
        finally:
            proc.terminate()
            proc.wait(timeout=30)


MISTAKES = {
    "port-in-use": (
        ("serve", "--port", "{taken}", "--no-store"),
        ExitCode.ADDRESS_IN_USE,
        "in use",
    ),
    "nothing-at-target": (
        ("rollout", "--target", "127.0.0.1:{free}", "--seeds", "0"),
        ExitCode.UNREACHABLE,
        "nothing answers at 127.0.0.1:",
    ),
    "health-nothing-at-target": (
        ("health", "--target", "127.0.0.1:{free}", "--timeout", "1"),
        ExitCode.UNREACHABLE,
        "nothing answers",
    ),
    "unknown-scenario-demo": (
        ("demo", "--scenario", "payment-bad-deplo", "--no-store"),
        ExitCode.USAGE,
        "did you mean payment-bad-deploy",
    ),
    "unwritable-store": (
        ("serve", "--port", "0", "--store", "/proc/metasre.db"),
        ExitCode.STORE,
        "--store",
    ),
    "rollout-unwritable-store": (
        ("rollout", "--store", "/proc/m.db", "--seeds", "0"),
        ExitCode.STORE,
        "--store",
    ),
    "export-into-missing-folder": (
        ("export", "--store", "{tmp}/m.db", "--out", "{tmp}/missing/out.jsonl"),
        ExitCode.OUTPUT,
        "does not exist; create it",
    ),
    "export-no-store": (
        ("export", "--store", "{tmp}/none.db", "--out", "-"),
        ExitCode.STORE,
        "no trajectory store",
    ),
    "base-url-without-scheme": (
        ("llm", "--base-url", "localhost:11434/v1", "--model", "m"),
        ExitCode.USAGE,
        "http://localhost:11434/v1",
    ),
    "llm-without-endpoint": (("llm", "--model", "m"), ExitCode.USAGE, "base"),
    "seeds-reversed": (("rollout", "--seeds", "9-2"), ExitCode.USAGE, "a range goes up"),
    "seeds-not-a-list": (("validate", "--seeds", "x"), ExitCode.USAGE, "seed list"),
    "not-a-number": (("rollout", "--parallel", "many"), ExitCode.USAGE, "whole number"),
    "tls-ca-unreadable": (
        ("rollout", "--target", "127.0.0.1:{free}", "--tls-ca", "{tmp}/none.pem"),
        ExitCode.USAGE,
        "cannot read the TLS certificate",
    ),
    "target-without-port": (("health", "--target", "localhost"), ExitCode.USAGE, "has no port"),
    "tls-files-unreadable": (
        ("serve", "--port", "0", "--no-store", "--tls-cert", "{tmp}/c.pem", "--tls-key", "{tmp}/k"),
        ExitCode.USAGE,
        "cannot read the TLS file",
    ),
    "serve-on-a-foreign-address": (
        ("serve", "--host", "192.0.2.1", "--port", "0", "--no-store"),
        ExitCode.USAGE,
        "check --host and --port",
    ),
    "tls-without-target": (("rollout", "--tls"), ExitCode.USAGE, "TLS needs --target"),
    "bridge-without-target": (("bridge", "openenv"), ExitCode.USAGE, "--target HOST:PORT"),
    "bridge-without-protocol": (("bridge",), ExitCode.USAGE, "PROTOCOL"),
    "bridge-port-out-of-range": (
        ("bridge", "openenv", "--port", "70000"),
        ExitCode.USAGE,
        "not a port number",
    ),
    "mcp-access-token-unset": (
        ("mcp", "--target", "127.0.0.1:{free}", "--access-token-env", "METASRE_NO_SUCH_VAR"),
        ExitCode.USAGE,
        "empty or unset",
    ),
    "full-loadtest-with-target": (
        ("loadtest", "--target", "127.0.0.1:{free}"),
        ExitCode.USAGE,
        "server of its own",
    ),
    "rollout-into-postgresql": (
        ("rollout", "--scenario", "payment-bad-deploy", "--store", "postgresql://u@/db"),
        ExitCode.USAGE,
        "is for `metasre serve`",
    ),
}


@pytest.mark.parametrize("case", list(MISTAKES), ids=list(MISTAKES))
def test_a_mistake_is_one_line_and_its_own_exit_code(
    case: str, tmp_path: Path, taken_port: int
) -> None:
    args, code, says = MISTAKES[case]
    if case == "export-into-missing-folder":
        seeded = run(
            "rollout",
            "--scenario",
            "payment-bad-deploy",
            "--seeds",
            "0",
            "--store",
            str(tmp_path / "m.db"),
            cwd=tmp_path,
        )
        assert seeded.returncode == 0, seeded.stderr
    fill = {"taken": str(taken_port), "free": str(free_port()), "tmp": str(tmp_path)}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("METASRE_", "OPENAI_"))}
    done = run(*(a.format(**fill) for a in args), cwd=tmp_path, env=env, timeout=120)
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    # argparse's own mistakes come after its usage lines, as `metasre CMD: error: ...`.
    errors = [
        line
        for line in done.stderr.splitlines()
        if "error: " in line or line.startswith("unhealthy")
    ]
    assert len(errors) == 1 and says in errors[0], done.stderr


@SERVED
def test_a_refused_token_names_the_variable_to_set(served: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("METASRE_")}
    done = run(
        "rollout", "--target", served, "--seeds", "0", "--scenario", "payment-bad-deploy", env=env
    )
    assert done.returncode == ExitCode.REFUSED
    assert (
        "$METASRE_ADMIN_TOKEN is empty or unset" in done.stderr and "Traceback" not in done.stderr
    )
    env["METASRE_TARGET"] = served  # the environment names the server
    env["METASRE_ADMIN_TOKEN"] = "tok-en"
    ok = run("rollout", "--seeds", "0", "--scenario", "payment-bad-deploy", "--json", env=env)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["target"] == served


def test_export_on_a_terminal_asks_for_out(tmp_path: Path) -> None:
    import pty

    seeded = run("rollout", "--scenario", "payment-bad-deploy", "--seeds", "0", cwd=tmp_path)
    assert seeded.returncode == 0, seeded.stderr
    assert "trajectories in metasre.db" in seeded.stderr
    primary, secondary = pty.openpty()
    try:
        done = subprocess.run(
            [*METASRE, "export"],
            stdout=secondary,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
            timeout=60,
        )
    finally:
        os.close(secondary)
        os.close(primary)
    assert done.returncode == ExitCode.USAGE and "--out FILE" in done.stderr
    piped = run("export", cwd=tmp_path)  # not a terminal: stdout is fine
    assert piped.returncode == 0 and len(piped.stdout.splitlines()) == 1


# -- Ctrl-C -------------------------------------------------------------------------------------


def _start(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*METASRE, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env=env,
    )


def _wait_for(stream, text: str) -> list[str]:
    seen = []
    for line in stream:
        seen.append(line)
        if text in line:
            return seen
    raise AssertionError(f"{text!r} never came: {''.join(seen)}")


@SERVED
def test_ctrl_c_stops_a_rollout_closes_its_sessions_and_prints_the_partial_table(
    served: str, tmp_path: Path
) -> None:
    import grpc

    from metasre.v1 import control_pb2, control_pb2_grpc

    env = {**os.environ, "METASRE_ADMIN_TOKEN": "tok-en"}
    proc = _start(
        "rollout", "--target", served, "--seeds", "0-399", "--parallel", "4", "--json",
        "--agent", "team", cwd=tmp_path, env=env,
    )  # fmt: skip
    assert proc.stderr is not None
    _wait_for(proc.stderr, "progress: 1/")
    proc.send_signal(signal.SIGINT)
    # Prompt: the team's seats stop waiting for teammates once their session is closed (they
    # used to wait out a minute's message timeout).
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == ExitCode.INTERRUPTED, err
    report = json.loads(out)
    assert 1 <= report["episodes"] < 3600 and report["interrupted"]["not_started"] > 0
    assert all(r["graded"] for r in report["results"])  # cut-short episodes are not rows
    assert "interrupted:" in err and "Traceback" not in err
    with grpc.insecure_channel(served) as channel:
        listed = control_pb2_grpc.ControlServiceStub(channel).ListSessions(
            control_pb2.ListSessionsRequest(), metadata=(("authorization", "Bearer tok-en"),)
        )
    assert list(listed.sessions) == []  # every session the rollout opened is closed


def test_a_second_ctrl_c_exits_at_once(tmp_path: Path) -> None:
    proc = _start("rollout", "--seeds", "0-999", "--no-store", cwd=tmp_path)
    assert proc.stderr is not None
    _wait_for(proc.stderr, "progress: 1/")
    proc.send_signal(signal.SIGINT)
    _wait_for(proc.stderr, "Ctrl-C again")
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == ExitCode.INTERRUPTED and "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "ready", "says"),
    [
        (("demo", "--no-store"), "#1 ", "interrupted"),
        (("validate", "--seeds", "0-50"), "family", "interrupted"),
        (("loadtest", "--sessions", "400", "--warmup", "0"), None, "INTERRUPTED"),
    ],
    ids=["demo", "validate", "loadtest"],
)
def test_ctrl_c_winds_down_other_long_commands(
    args: tuple[str, ...], ready: str | None, says: str, tmp_path: Path
) -> None:
    # The demo's episode takes about a second: on a loaded machine it can end before the
    # signal lands. A run that finished is no verdict on Ctrl-C, so it is tried again.
    for _ in range(5):
        proc = _start(*args, cwd=tmp_path)
        assert proc.stdout is not None and proc.stderr is not None
        if ready is not None:
            _wait_for(proc.stdout, ready)
        else:
            _wait_for(proc.stderr, "load test: ")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
        assert "Traceback" not in err
        if proc.returncode == ExitCode.OK and args[0] == "demo":
            continue
        break
    assert proc.returncode == ExitCode.INTERRUPTED, out + err
    assert says in out + err


# -- help, seeds, logs --------------------------------------------------------------------------


def _subcommands() -> list[str]:
    from metasre.cli.main import build_parser

    parser = build_parser()
    (sub,) = [a for a in parser._actions if a.dest == "command"]
    return sorted(sub.choices)  # type: ignore[arg-type]


@pytest.mark.parametrize("command", _subcommands())
def test_every_subcommand_has_a_description_and_shows_defaults(command: str) -> None:
    done = run(command, "--help")
    assert done.returncode == 0
    head = done.stdout.split("\n\n")[1]  # the description, under the usage lines
    assert len(head) > 30 and "..." not in head
    assert "-v, --verbose" in done.stdout


def test_top_level_help_is_complete_and_lists_exit_codes() -> None:
    done = run("--help")
    description = done.stdout.split("\n\n", 1)[1].split("positional arguments")[0]
    assert "..." not in description and description.rstrip().endswith(".")
    assert "exit codes:" in done.stdout and "130" in done.stdout


def test_verbose_works_after_the_subcommand(tmp_path: Path) -> None:
    quiet = run(
        "rollout", "--seeds", "0", "--scenario", "payment-bad-deploy", "--no-store", cwd=tmp_path
    )
    loud = run(
        "rollout",
        "--seeds",
        "0",
        "--scenario",
        "payment-bad-deploy",
        "--no-store",
        "-v",
        cwd=tmp_path,
    )
    assert quiet.returncode == loud.returncode == 0
    # The in-process server logs warnings only by default: no info line under the table.
    assert '"level": "info"' not in quiet.stderr
    assert '"level": "debug"' in loud.stderr or '"level": "info"' in loud.stderr


@pytest.mark.parametrize(
    ("text", "seeds"),
    [
        ("7", [7]),
        ("0-3", [0, 1, 2, 3]),
        ("1,5,9", [1, 5, 9]),
        ("0-2,10", [0, 1, 2, 10]),
        ("2,2", [2]),
    ],
)
def test_a_seed_list_means_the_seeds_it_names(text: str, seeds: list[int]) -> None:
    from metasre.cli.arguments import seed_list, seeds_text

    assert seed_list(text) == seeds
    assert seed_list(seeds_text(seeds)) == seeds  # and back


def test_rollout_seeds_7_plays_seed_7_only(tmp_path: Path) -> None:
    done = run(
        "rollout",
        "--scenario",
        "payment-bad-deploy",
        "--seeds",
        "7",
        "--json",
        "--no-store",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert [r["seed"] for r in json.loads(done.stdout)["results"]] == [7]


def test_validate_seeds_0_checks_seed_0(tmp_path: Path) -> None:
    done = run(
        "validate",
        "payment-bad-deploy",
        "--seeds",
        "0",
        "--random-seeds",
        "0",
        # The shallow policies' 50 default seeds (60 fitted) are what tests/test_shallow_checks
        # and the conformance suite check; here they were 3/4 of the test's time.
        "--shallow-seeds",
        "0",
        "--json",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    (report,) = json.loads(done.stdout)
    assert report["seeds"] == [0] and report["expert_min"] >= 0.9


def _serve_logs(*flags: str, tty: bool) -> str:
    """What `metasre serve` logs as it starts, its stderr a terminal or a pipe."""
    import pty

    argv = [*METASRE, *flags, "serve", "--port", "0", "--no-store"]
    if not tty:
        with subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        ) as proc:
            assert proc.stdout is not None and proc.stderr is not None
            proc.stdout.readline()  # serving: its log line was written before
            proc.terminate()
            return proc.stderr.readline()
    primary, secondary = pty.openpty()
    with (
        os.fdopen(primary, "rb", buffering=0) as terminal,
        subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=secondary, text=True) as proc,
    ):
        os.close(secondary)
        assert proc.stdout is not None
        proc.stdout.readline()
        text = terminal.read(4096).decode()
        proc.terminate()
    return text


def test_logs_are_for_people_on_a_terminal_and_json_elsewhere() -> None:
    on_terminal = _serve_logs(tty=True)
    assert "serving" in on_terminal and not on_terminal.lstrip().startswith("{")
    assert json.loads(_serve_logs(tty=False))["event"]
    forced = _serve_logs("--log-format", "json", tty=True)
    assert json.loads(forced.splitlines()[0])["level"] == "info"


# -- demo ---------------------------------------------------------------------------------------


def test_the_demo_says_what_the_incident_is_and_prints_alike_twice(tmp_path: Path) -> None:
    import re

    def once() -> str:
        done = run("demo", "--no-store", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        return re.sub(r"127\.0\.0\.1:\d+", "ADDRESS", done.stdout)

    first, second = once(), once()
    assert "Incident: Payments failing" in first and "severity P1" in first
    assert "grade  = the grader's score of the team's outcome, in [0, 1]" in first
    assert "reward = what an agent was paid: the sum of its per-step rewards" in first
    assert first == second


# -- loadtest modes -----------------------------------------------------------------------------


def test_loadtest_overload_counts_accepted_and_refused(tmp_path: Path) -> None:
    done = run("loadtest", "--mode", "overload", "--cap", "4", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["cap"] == 4 and report["sessions"] == 8
    assert report["accepted"] + report["refused"] == 8 and report["accepted"] >= 1
    assert report["accepted_ms"]["p50"] is not None
    assert report["refused_with_retry_info"] <= report["refused"]


def test_loadtest_slow_reader_measures_memory_and_the_seat_s_fate(tmp_path: Path) -> None:
    done = run("loadtest", "--mode", "slow-reader", "--calls", "40", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["calls_made"] == 40 and report["rss_before_mb"] > 0 and report["rss_after_mb"] > 0
    assert report["cut_off"] in (True, False)


# -- Dockerfile ---------------------------------------------------------------------------------


def test_the_dockerfile_installs_pinned_dependencies_before_the_code() -> None:
    lines = [
        line.strip()
        for line in (ROOT / "Dockerfile").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    froms = [line for line in lines if line.startswith("FROM ")]
    assert froms and all("@sha256:" in f or ":3.11." in f for f in froms), froms
    first_code = min(i for i, line in enumerate(lines) if line.startswith("COPY simulator"))
    deps = [i for i, line in enumerate(lines) if "constraints.txt" in line and "pip" in line]
    assert deps and deps[0] < first_code  # dependencies are a layer of their own
    assert "USER 10001:10001" in lines and 'VOLUME ["/data"]' in lines
    pins = (ROOT / "constraints.txt").read_text().splitlines()
    assert any(p.startswith("grpcio==") for p in pins) and all(
        "==" in p for p in pins if p and not p.startswith("#")
    )
    readme = (ROOT / "README.md").read_text()
    assert "-v metasre-data:/data" in readme and "--handover" in readme


# -- llm Ctrl-C and TLS connection flags ----------------------------------------------------------


def test_ctrl_c_leaves_an_llm_that_never_answers(tmp_path: Path) -> None:
    """The model's endpoint takes the request and says nothing: Ctrl-C must not wait for it."""
    import threading

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        accepted: list[socket.socket] = []
        threading.Thread(target=lambda: accepted.append(silent.accept()[0]), daemon=True).start()
        proc = _start(
            "llm", "--base-url", f"http://127.0.0.1:{port}/v1", "--model", "m", "--no-store",
            cwd=tmp_path,
        )  # fmt: skip
        assert proc.stdout is not None
        _wait_for(proc.stdout, "[page]")
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        for conn in accepted:
            conn.close()
    assert proc.returncode == ExitCode.INTERRUPTED, err
    assert "interrupted: the session is closed" in err and "Traceback" not in err


def test_tls_flags_reach_a_tls_server(tmp_path: Path) -> None:
    # tests/ is on sys.path (its conftest), tests/service a package: the TLS tests' helper.
    from service.test_tls import self_signed

    cert = self_signed(tmp_path, "server")
    with subprocess.Popen(
        [*METASRE, "serve", "--port", "0", "--no-store", "--tls-cert", str(cert.cert),
         "--tls-key", str(cert.key)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=tmp_path,
    ) as server:  # fmt: skip
        assert server.stdout is not None
        address = json.loads(server.stdout.readline())["address"]
        try:
            plain = run("health", "--target", address, "--timeout", "2")
            assert plain.returncode == ExitCode.UNREACHABLE and "TLS" in plain.stderr
            env = {**os.environ, "METASRE_TLS_CA": str(cert.cert), "METASRE_TARGET": address}
            assert run("health", env=env).stdout.strip() == "SERVING"
            played = run(
                "rollout", "--scenario", "payment-bad-deploy", "--seeds", "3", "--json",
                "--tls-ca", str(cert.cert), "--target", address,
            )  # fmt: skip
            assert played.returncode == 0, played.stderr
            assert json.loads(played.stdout)["total"]["graded"] == 1
        finally:
            server.terminate()
            server.wait(30)


def test_constraints_pin_every_runtime_dependency() -> None:
    import re
    import tomllib

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    pinned = {
        line.split("==")[0]
        for line in (ROOT / "constraints.txt").read_text().splitlines()
        if "==" in line
    }
    for requirement in declared:
        name = re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0]
        assert re.sub(r"[-_.]+", "-", name).lower() in pinned, (
            f"{name} is not in constraints.txt: run .venv/bin/python .ci/constraints"
        )
