"""The metasre command, run as a real subprocess."""

import json
import subprocess
import sys


def metasre(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "metasre.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_scenarios_lists_every_registered_id_as_json():
    from metasre.simulator import scenario_ids

    out = metasre("scenarios", "--json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert [r["id"] for r in rows] == scenario_ids()
    assert all(r["seed_varies"] for r in rows)
    # families, each counted over seeds 0-99
    assert len(rows) >= 18
    for r in rows:
        assert r["seeds"] == 100 and sum(r["difficulty"].values()) == 100, r["id"]
        assert r["ground_truths"] >= 20 and r["categories"] and r["remediations"], r["id"]


def test_scenarios_prints_the_family_table():
    out = metasre("scenarios")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].split()[:3] == ["family", "sev", "truths"]
    assert "an instance is (family id, seed)" in out.stdout


def test_validate_proves_a_scenario_and_prints_its_figures():
    out = metasre(
        *("validate", "ad-ranking-crash", "--seeds", "0-1", "--random-seeds", "0-2", "--json"),
        # the shallow policies' figures are tests/test_shallow_checks.py's (their 50 default
        # seeds were most of this test's time)
        *("--shallow-seeds", "0"),
    )
    assert out.returncode == 0, out.stdout + out.stderr
    (report,) = json.loads(out.stdout)
    assert report["ok"] and report["expert_min"] >= 0.9 and report["random_mean"] <= 0.2
    assert 0 < report["grading_cpu_ms"] <= 200  # measured, and within validate's budget


def test_validate_names_an_unknown_scenario_and_exits_non_zero():
    out = metasre("validate", "ad-ranking-crsh")
    assert out.returncode == 2
    assert "ad-ranking-crash" in out.stderr  # the close match


def test_demo_serves_plays_the_team_and_prints_the_grade(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "metasre.cli.main", "demo", "--store", str(tmp_path / "d.db")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout
    assert "investigator -> commander, fixer: Root cause: payment-service" in text
    assert "rollback_deployment(service=payment-service)" in text
    total = float(text.split("\nGrade ", 1)[1].split()[0])
    assert total >= 0.9 and "(resolved)" in text


def test_health_reports_a_serving_server_and_fails_without_one(tmp_path):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
    down = metasre("health", "--target", f"127.0.0.1:{free}", "--timeout", "1")
    assert down.returncode == 10 and "unhealthy: nothing answers" in down.stderr  # UNREACHABLE
    with subprocess.Popen(
        [sys.executable, "-m", "metasre.cli.main", "serve", "--port", "0", "--no-store"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=tmp_path,
    ) as server:
        try:
            assert server.stdout is not None
            serving = json.loads(server.stdout.readline())
            up = metasre("health", "--target", serving["address"])
            assert up.returncode == 0 and up.stdout.strip() == "SERVING"
        finally:
            server.terminate()
            server.wait(timeout=30)


def test_the_image_s_command_is_one_the_cli_accepts():
    # The Dockerfile cannot be built here; its command line is checked against the parser.
    from pathlib import Path

    from metasre.cli.main import build_parser

    lines = (Path(__file__).parent.parent / "Dockerfile").read_text().splitlines()
    command = json.loads(
        next(line for line in lines if line.startswith("CMD [")).removeprefix("CMD")
    )
    args = build_parser().parse_args(command)
    assert args.command == "serve" and args.handover and args.store == "/data/metasre.db"
    assert (args.host, args.port) == ("0.0.0.0", 50051)


async def test_rollout_reaches_a_server_that_has_an_admin_token() -> None:
    """Issue 17 (command line 2): rollout had no way to send an admin token."""
    import asyncio
    import os
    import subprocess
    import sys

    from metasre.service import ServerConfig, build_server

    server = await build_server(ServerConfig(port=0, admin_token="s3cret-token", grace_seconds=0.2))
    await server.start()
    try:
        argv = [
            *(sys.executable, "-m", "metasre.cli.main", "rollout", "--target", server.address),
            *("--scenario", "payment-bad-deploy", "--seeds", "0-0", "--json", "--no-progress"),
        ]
        env = {k: v for k, v in os.environ.items() if k != "METASRE_ADMIN_TOKEN"}
        refused = await asyncio.to_thread(
            subprocess.run, argv, capture_output=True, text=True, env=env, timeout=120
        )
        assert refused.returncode == 3
        assert "--admin-token-env" in refused.stderr and "Traceback" not in refused.stderr
        env["MY_TOKEN"] = "s3cret-token"
        done = await asyncio.to_thread(
            subprocess.run,
            [*argv, "--admin-token-env", "MY_TOKEN"],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["total"]["graded"] == 1
    finally:
        await server.stop(0.2)


def test_version_names_the_software_and_the_protocol() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "metasre.cli.main", "--version"], capture_output=True, text=True
    )
    assert done.returncode == 0
    assert done.stdout.startswith("metasre ") and "protocol metasre.v1" in done.stdout


def test_demo_on_a_team_family_seats_its_roles_each_in_its_view(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "metasre.cli.main", "demo", "--scenario", "split-evidence",
         "--seed", "3", "--turn-policy", "simultaneous", "--store", str(tmp_path / "d.db")],
        capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout
    assert "a team of its 2 roles (app-oncall, release-manager)" in text
    assert "role release-manager: " in text
    # The seat that sees the failure tells the seat that can act; that seat rolls back.
    assert "app-oncall -> release-manager:" in text
    assert "release-manager rollback_deployment(" in text
    assert "(resolved)" in text
    # Issue 28: a message with a newline broke the columns, and a role's id overflowed its
    # column; every play-by-play line is a call (its agent column as wide as the longest id)
    # or an indented line under it. --turn-policy (as llm says it), in lower case (as exports).
    play = text.split("\n\n", 1)[1].split("\n\nGrade ", 1)[0].splitlines()
    calls = [line for line in play if line.startswith(" t+")]
    assert calls and all(line.startswith(" t+") or line.startswith(" " * 22) for line in play)
    tools = {line.index(" " + line.split()[3]) for line in calls}  # where each tool starts
    assert len(tools) == 1, calls
    assert "\\n" in text  # the newline of a message, shown escaped on its call's line
