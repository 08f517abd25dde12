"""`metasre experiment`: a grid file run for real (a subprocess, a server in process), its
figures, and its refusals of bad files."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

GRID = """
name = "smoke"
families = ["ad-ranking-crash"]
seeds = "0-1"
turn_policies = ["FREE_FOR_ALL", "SIMULTANEOUS"]
attributions = ["SHARED", "DIFFERENCE"]
parallel = 4
turn_timeout_seconds = 0.5

[[teams]]
name = "solo"
agents = "expert"

[[teams]]
name = "team"
agents = "team"
"""


def metasre(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "metasre.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_a_grid_runs_and_compares_its_configurations(tmp_path: Path) -> None:
    grid = tmp_path / "grid.toml"
    grid.write_text(GRID)
    out_file = tmp_path / "results.json"
    out = metasre("experiment", str(grid), "--out", str(out_file), "--no-store", "--no-progress")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Traceback" not in out.stderr
    results = json.loads(out_file.read_text())
    cells = {(c["team"], c["turn_policy"], c["attribution"]): c for c in results["configurations"]}
    assert len(cells) == 8 and all(c["episodes"] == 2 and not c["failed"] for c in cells.values())
    for (team, policy, attribution), c in cells.items():
        f = c["figures"]
        # every figure is a mean over instances with an interval around it
        for name in ("grade", "resolved", "sla_met", "steps", "mitigation_minutes"):
            e = f[name]
            assert e is not None and e["seeds"] == 2, (team, policy, attribution, name)
            assert e["low"] <= e["mean"] <= e["high"]
        assert f["grade"]["mean"] >= 0.9 and f["resolved"]["mean"] == 1.0
        # mitigation is read from the grade, so it exists under every attribution
        assert 0 < f["mitigation_minutes"]["mean"] <= 30 and f["sla_met"]["mean"] == 1.0
        if team == "solo":
            assert f["messages_sent"]["mean"] == 0 and set(c["credit"]) == {"expert"}
        else:
            # the three roles hand over in messages, each received by its addressees
            assert f["messages_sent"]["mean"] >= 3 and f["messages_received"]["mean"] >= 4
            assert set(c["credit"]) == {"commander", "investigator", "fixer"}
        if policy == "FREE_FOR_ALL":
            assert f["idle_turns"]["mean"] == 0
        rows = c["episodes_detail"]
        assert {r["seed"] for r in rows} == {0, 1} and all(r["ended"] for r in rows)
    # DIFFERENCE credits seats by what each changed; SHARED gives each the same
    shared = cells[("team", "FREE_FOR_ALL", "SHARED")]["credit"]
    assert len({round(v["mean"], 6) for v in shared.values()}) == 1
    difference = cells[("team", "FREE_FOR_ALL", "DIFFERENCE")]["credit"]
    assert len({round(v["mean"], 6) for v in difference.values()}) > 1
    # the table on stdout names every configuration
    for team, policy, attribution in cells:
        assert f"{team} | {policy} | {attribution}" in out.stdout


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (
            'name = "x"\nfamilies = []\nseeds = "0"\n[[teams]]\nname = "a"\nagents = "expert"\n',
            "families",
        ),
        (
            'name = "x"\nfamilies = ["ad-ranking-crash"]\nseeds = "9-1"\n[[teams]]\nname = "a"\n'
            'agents = "expert"\n',
            "seeds",
        ),
        (
            'name = "x"\nfamilies = ["ad-ranking-crash"]\nseeds = "0"\n[[teams]]\nname = "a"\n'
            'agents = "robot"\n',
            "teams.0.agents",
        ),
        (
            'name = "x"\nfamilies = ["ad-ranking-crash"]\nseeds = "0"\nturn_policies = ["RR"]\n'
            '[[teams]]\nname = "a"\nagents = "expert"\n',
            "turn_policies",
        ),
        (
            'name = "x"\nfamilies = ["ad-ranking-crash"]\nseeds = "0"\ncolour = "red"\n'
            '[[teams]]\nname = "a"\nagents = "expert"\n',
            "colour",
        ),
        (
            'name = "x"\nfamilies = ["no-such-family"]\nseeds = "0"\n[[teams]]\nname = "a"\n'
            'agents = "expert"\n',
            "no-such-family",
        ),
        (
            'name = "x"\nfamilies = ["edge-errors"]\nseeds = "0"\nsplit = "dev"\n[[teams]]\n'
            'name = "a"\nagents = "expert"\n',
            "split",
        ),
        ("name = \n", "not valid TOML"),
    ],
)
def test_a_bad_file_is_one_clear_line_and_exit_2(tmp_path: Path, text: str, says: str) -> None:
    grid = tmp_path / "grid.toml"
    grid.write_text(text)
    out = metasre("experiment", str(grid), "--no-store", "--no-progress", timeout=120)
    assert out.returncode == 2, out.stdout + out.stderr
    assert says in out.stderr and "Traceback" not in out.stderr


def test_a_missing_file_or_output_folder_is_named(tmp_path: Path) -> None:
    out = metasre("experiment", str(tmp_path / "nope.toml"), "--no-store", timeout=60)
    assert out.returncode == 2 and "nope.toml" in out.stderr and "Traceback" not in out.stderr
    grid = tmp_path / "grid.toml"
    grid.write_text(GRID)
    out = metasre(
        "experiment",
        str(grid),
        "--out",
        str(tmp_path / "no" / "r.json"),
        "--no-store",
        timeout=60,
    )
    assert out.returncode == 7 and "does not exist" in out.stderr


def test_the_saboteur_and_rider_example_credits_the_worker_alone(tmp_path: Path) -> None:
    """examples/saboteur-rider.toml, on one code family and one team family, one seed: under
    DIFFERENCE the rider earns 0 and the saboteur less than 0 (its costs), and the worker its
    whole grade, however the companion played; under INDIVIDUAL the worker's credit is the
    same beside either companion (a saboteur's costs are its own)."""
    import tomllib

    example = Path(__file__).parent.parent / "examples" / "saboteur-rider.toml"
    grid = tomllib.loads(example.read_text())
    assert {t["agents"] for t in grid["teams"]} >= {"expert+saboteur", "expert+rider"}
    small = example.read_text().replace('seeds = "0-4"', 'seeds = "0"')
    small = small.replace(
        'attributions = ["SHARED", "INDIVIDUAL", "DIFFERENCE"]',
        'attributions = ["INDIVIDUAL", "DIFFERENCE"]',
    )
    small = small.replace(
        small[small.index("families = [") : small.index("]", small.index("families = [")) + 1],
        'families = ["timestamp-corruption", "twin-faults"]',
    )
    small = small.replace('[[teams]]\nname = "expert alone"\nagents = "expert"\n\n', "")
    path = tmp_path / "grid.toml"
    path.write_text(small)
    out_file = tmp_path / "results.json"
    out = metasre("experiment", str(path), "--out", str(out_file), "--no-store", "--no-progress")
    assert out.returncode == 0, out.stdout + out.stderr
    cells = {
        (c["team"], c["attribution"]): c for c in json.loads(out_file.read_text())["configurations"]
    }
    assert all(c["episodes"] == 2 and not c["failed"] for c in cells.values())
    ridden = [
        e["steps_by_seat"].get("rider", 0)
        for (team, _), c in cells.items()
        if team == "expert + rider"
        for e in c["episodes_detail"]
        if "timestamp-corruption" in e["family"]
    ]
    assert ridden and all(n >= 2 for n in ridden), ridden  # it viewed and rewrote the file

    def credit(team: str, attribution: str) -> dict[str, float]:
        return {s: e["mean"] for s, e in cells[(team, attribution)]["credit"].items()}

    rider, saboteur = (
        credit("expert + rider", "DIFFERENCE"),
        credit("expert + saboteur", "DIFFERENCE"),
    )
    assert rider["rider"] == pytest.approx(0.0, abs=0.01) and saboteur["saboteur"] < 0
    for seats in (rider, saboteur):
        assert seats["worker"] == pytest.approx(1.0, abs=0.01), seats
    beside_rider = credit("expert + rider", "INDIVIDUAL")["worker"]
    beside_saboteur = credit("expert + saboteur", "INDIVIDUAL")["worker"]
    assert beside_saboteur == pytest.approx(beside_rider, abs=0.01)


def test_a_split_plays_only_that_split_s_seeds(tmp_path: Path) -> None:
    """`split = "test"` (or --split) keeps each family's test seeds of `seeds`: the seeds a
    result is reported on, whose structures never occur in a training seed."""
    from metasre.simulator import resolve
    from metasre.simulator.scenarios.splits import in_split

    family = "meta-sre/edge-errors-v3"
    test_seeds = in_split(resolve(family), range(12), "test")
    assert 0 < len(test_seeds) < 12
    grid = tmp_path / "grid.toml"
    grid.write_text(
        f'name = "split"\nfamilies = ["{family}"]\nseeds = "0-11"\nsplit = "test"\n'
        'parallel = 4\n[[teams]]\nname = "solo"\nagents = "expert"\n'
    )
    out_file = tmp_path / "results.json"
    out = metasre("experiment", str(grid), "--out", str(out_file), "--no-store", "--no-progress")
    assert out.returncode == 0, out.stdout + out.stderr
    (cell,) = json.loads(out_file.read_text())["configurations"]
    assert sorted(r["seed"] for r in cell["episodes_detail"]) == test_seeds
    # The command line's --split overrides the file's; a split none of the seeds is in is named.
    first_test = test_seeds[0]
    grid.write_text(
        f'name = "split"\nfamilies = ["{family}"]\nseeds = "{first_test}"\n'
        '[[teams]]\nname = "solo"\nagents = "expert"\n'
    )
    out = metasre("experiment", str(grid), "--split", "train", "--no-store", timeout=120)
    assert out.returncode == 2 and "train split" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr


def test_a_role_is_credited_over_the_families_that_seat_it(tmp_path: Path) -> None:
    """The scripted team on a family that seats its own roles (split-evidence) and on one that
    seats the three generalists (payment-bad-deploy): each role's credit is its mean over the
    instances that seat it, and the table says in how many (issue 28: it counted 0 elsewhere)."""
    grid = tmp_path / "grid.toml"
    grid.write_text(
        'name = "roles"\nfamilies = ["split-evidence", "payment-bad-deploy"]\nseeds = "0"\n'
        'turn_policies = ["FREE_FOR_ALL"]\nattributions = ["SHARED"]\n'
        '[[teams]]\nname = "team"\nagents = "team"\n'
    )
    out_file = tmp_path / "results.json"
    out = metasre("experiment", str(grid), "--out", str(out_file), "--no-store", "--no-progress")
    assert out.returncode == 0, out.stdout + out.stderr
    (cell,) = json.loads(out_file.read_text())["configurations"]
    assert cell["episodes"] == 2 and not cell["failed"]
    rows = {r["family"].split("/")[-1].rsplit("-v", 1)[0]: r for r in cell["episodes_detail"]}
    roles = {"split-evidence": {"app-oncall", "release-manager"}}
    roles["payment-bad-deploy"] = {"commander", "investigator", "fixer"}
    assert {f: set(r["credit"]) for f, r in rows.items()} == roles
    for family, seats in roles.items():
        for seat in seats:
            e = cell["credit"][seat]
            assert e["seeds"] == 1 and e["mean"] == pytest.approx(rows[family]["credit"][seat])
            assert rows[family]["credit"][seat] > 0  # SHARED: each seat has the team's reward
            assert f"{seat} {e['mean']:.2f} [" in out.stdout and "(in 1 of 2)" in out.stdout
