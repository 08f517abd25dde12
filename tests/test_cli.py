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


def test_validate_proves_a_scenario_and_prints_its_figures():
    out = metasre("validate", "ad-ranking-crash", "--seeds", "2", "--random-seeds", "3", "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    (report,) = json.loads(out.stdout)
    assert report["ok"] and report["expert_min"] >= 0.9 and report["random_mean"] <= 0.2


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
    assert down.returncode == 1 and "unhealthy" in down.stderr
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
