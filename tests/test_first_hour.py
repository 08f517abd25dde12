"""A new user's first hour (issue 28): the README's tour run as pasted, the CLI's edges.

Each test runs the real `metasre` command as a subprocess, in a folder of its own.
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import socket
import sys
from pathlib import Path

from metasre.service.process import start_serve

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 240.0


def tour() -> list[str]:
    """The command lines of the README's two-minute tour, comments dropped."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("## A two-minute tour", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    return [line.split("  #", 1)[0].strip() for line in block.strip().splitlines()]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


ALONE = {"scenarios", "validate"}
"""Tour lines that start no server and open no store: nothing for the others to conflict with,
and the dearest to run (every family's figures), so they are left to tests/test_cli.py."""

SMALLER = {
    # The tour's sizes, shrunk so the test stays quick; the commands and the store stay as
    # written. What is tested is that the commands, run in this order, get along.
    "--episodes 90": "--episodes 4",
    "--seeds 0-4": "--seeds 0",
}


async def run(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "metasre.cli.main",
        *argv,
        cwd=cwd,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), TIMEOUT)
    assert proc.returncode is not None
    return proc.returncode, out.decode(errors="replace")


async def test_the_readme_tour_runs_as_pasted(tmp_path: Path) -> None:
    """Item 8: after the tour's `serve --store metasre.db &` held the store, every command that
    starts a server in process (rollout, llm, demo, experiment) exited 4. Run in order, each
    line now does its job; the LLM lines meet a dead endpoint here, so they exit 9 (the
    endpoint fails), not 4 (the store is held)."""
    lines = tour()
    assert lines[0] == "metasre scenarios" and lines[-1] == "metasre validate"
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "solo-vs-team.toml").write_text(
        re.sub(
            r"(?m)^seeds = .*$",
            'seeds = "0"',
            (ROOT / "examples" / "solo-vs-team.toml").read_text(encoding="utf-8"),
        ).replace(
            'families = ["payment-bad-deploy", "ad-ranking-crash", "migration-cascade"]',
            'families = ["payment-bad-deploy"]',
        ),
        encoding="utf-8",
    )
    dead = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    env = {k: v for k, v in os.environ.items() if not k.startswith(("METASRE_", "OPENAI_"))}
    env |= {"METASRE_LLM_BASE_URL": dead, "PYTHONUNBUFFERED": "1"}
    server: asyncio.subprocess.Process | None = None
    address = ""
    try:
        for line in lines:
            assert line.startswith("metasre "), line
            text = line.removeprefix("metasre ").replace("http://127.0.0.1:11434/v1", dead)
            for big, small in SMALLER.items():
                text = text.replace(big, small)
            if text.endswith("&"):  # the server, in the background
                argv = shlex.split(text.rstrip("& "))
                assert argv[:3] == ["serve", "--port", "50051"], argv
                server, address = await start_serve(
                    "--port", "0", *argv[3:], cwd=tmp_path, env=env, timeout=TIMEOUT
                )
                continue
            text = text.replace("127.0.0.1:50051", address)
            if text in ALONE:
                continue
            code, out = await run(shlex.split(text), tmp_path, env)
            assert "Traceback" not in out, out
            want = 9 if text.startswith("llm") else 0
            assert code == want, f"metasre {text}: exit {code}\n{out[-2000:]}"
        assert (tmp_path / "episodes.jsonl").stat().st_size > 0
        assert (tmp_path / "results.json").stat().st_size > 0
    finally:
        if server is not None and server.returncode is None:
            server.terminate()
            await asyncio.wait_for(server.wait(), TIMEOUT)


async def test_loadtest_modes_against_a_refusing_or_dead_target_say_one_line(
    tmp_path: Path,
) -> None:
    """Item 9: `loadtest --mode overload|slow-reader` with no token, a wrong token or a dead
    target ended in a traceback (grpc.aio AioRpcError) and exit 1. Each now prints one line and
    exits with its documented code: 3 when the server refused, 10 when nothing answers."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("METASRE_")}
    served_env = env | {"METASRE_ADMIN_TOKEN": "right-admin-token-123"}
    server, address = await start_serve(
        "--port", "0", "--no-store", cwd=tmp_path, env=served_env, timeout=TIMEOUT
    )
    dead = f"127.0.0.1:{free_port()}"
    cases = {
        ("no token", 3): (address, env),
        ("wrong token", 3): (address, env | {"METASRE_ADMIN_TOKEN": "wrong-admin-token-456"}),
        ("dead target", 10): (dead, env),
    }
    try:
        runs = {
            (mode, *case): run(
                ["loadtest", "--mode", mode, "--target", target, "--sessions", "2", "--calls", "2"],
                tmp_path,
                case_env,
            )
            for mode in ("overload", "slow-reader")
            for case, (target, case_env) in cases.items()
        }
        results = dict(zip(runs, await asyncio.gather(*runs.values()), strict=True))
    finally:
        server.terminate()
        await asyncio.wait_for(server.wait(), TIMEOUT)
    for (mode, case, want), (code, out) in results.items():
        lines = [x for x in out.splitlines() if x.strip()]
        assert code == want and len(lines) == 1, (mode, case, code, out)
        assert "Traceback" not in out and lines[0].startswith("error: "), (mode, case, out)


async def test_grpc_s_own_log_lines_do_not_come_before_the_one_line_error(tmp_path: Path) -> None:
    """Item 10: gRPC's C core printed 'E... add_port.cc:83] Failed to add port' (a port in use)
    or '... ssl_transport_security.cc ... Handshake failed' (--tls against a plaintext server)
    before the command's own one line. Now the one line is all; -v shows gRPC's lines again."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("METASRE_", "GRPC_"))}
    server, address = await start_serve("--port", "0", "--no-store", cwd=tmp_path, env=env)
    try:
        port = address.rpartition(":")[2]
        in_use, tls, verbose = await asyncio.gather(
            run(["serve", "--port", port, "--no-store"], tmp_path, env),
            run(["health", "--target", address, "--tls"], tmp_path, env),
            run(["-v", "serve", "--port", port, "--no-store"], tmp_path, env),
        )
    finally:
        server.terminate()
        await asyncio.wait_for(server.wait(), TIMEOUT)
    for (code, out), want in ((in_use, 5), (tls, 10)):
        lines = [x for x in out.splitlines() if x.strip()]
        assert code == want and len(lines) == 1, out
        assert not re.match(r"[EIW]\d{4} ", lines[0]), out  # gRPC's own line format
    assert verbose[0] == 5 and "add_port" in verbose[1], verbose


async def test_a_typo_in_a_command_s_flag_is_one_line_naming_the_closest(tmp_path: Path) -> None:
    """Item 10: `rollout --agnet` printed the top-level usage (every command) before the error."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("METASRE_")}
    code, out = await run(["rollout", "--agnet", "expert"], tmp_path, env)
    lines = [x for x in out.splitlines() if x.strip()]
    assert code == 2 and len(lines) == 1, out
    assert "--agnet" in lines[0] and "did you mean --agent?" in lines[0], out
