"""The report's figures and inputs, without a browser: stores and exports agree, pass@k is
right, a thousand episodes stay small and quick, and bad inputs get one line saying what to do."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from metasre.cli.main import main
from metasre.cli.report.page import build_report, comparison_of, rows_of
from metasre.cli.report.sources import read_runs
from metasre.cli.report.summary import pass_k, summarize

from .conftest import Played

# Under `pytest -n`: with the other report tests (conftest `played`).
pytestmark = pytest.mark.xdist_group("report")


def _export(store: Path, out: Path) -> Path:
    assert main(["export", "--store", str(store), "--out", str(out)]) == 0
    return out


def test_a_store_and_its_export_give_the_same_figures(played: Played, tmp_path: Path) -> None:
    exported = _export(played.stores["team"], tmp_path / "team.jsonl")
    from_store = read_runs([f"team={played.stores['team']}"])
    from_file = read_runs([f"team={exported}"])
    assert [r.kind for r in from_store + from_file] == ["store", "jsonl"]
    rows_a, _ = rows_of(from_store)
    rows_b, _ = rows_of(from_file)
    assert rows_a == rows_b and len(rows_a) == 4
    configs = {r.config for r in rows_a}
    assert summarize(min(configs), rows_a) == summarize(min(configs), rows_b)


def test_the_figures_are_those_of_the_episodes(played: Played) -> None:
    runs = read_runs([str(s) for s in played.stores.values()])
    rows, _ = rows_of(runs)
    expert = summarize("expert", [r for r in rows if r.config == "expert"])
    random = summarize("random", [r for r in rows if r.config == "random"])
    assert expert.episodes == 8 and expert.instances == 4
    assert expert.figures["resolved"] is not None and expert.figures["resolved"].mean == 1.0
    assert random.figures["resolved"] is not None and random.figures["resolved"].mean == 0.0
    assert random.figures["grade"] is not None and random.figures["grade"].high < 0.3
    # The expert played each instance twice: pass@2 and pass^2 exist, solo has no seat credit.
    assert expert.pass_at == {1: 1.0, 2: 1.0} and expert.pass_hat == {1: 1.0, 2: 1.0}
    assert random.pass_at == {1: 0.0}
    assert not expert.team and expert.credit == {}
    # Components: the weighted ones' scores; what unweighted ones take off is the penalty.
    assert set(expert.components) >= {"fix", "root_cause", "sla", "report", "efficiency"}
    assert all(e is not None and e.mean == 1.0 for e in expert.components.values())
    assert expert.figures["penalty"] is not None and expert.figures["penalty"].mean == 0.0
    assert random.figures["penalty"] is not None and random.figures["penalty"].high <= 0.0
    # One seed of each family is on the test split, the other on the training split.
    assert {(r.family, r.seed, r.split) for r in rows if r.config == "expert"} == {
        ("meta-sre/payment-bad-deploy-v2", 2, "test"),
        ("meta-sre/payment-bad-deploy-v2", 3, "train"),
        ("meta-sre/split-evidence-v2", 2, "train"),
        ("meta-sre/split-evidence-v2", 3, "test"),
    }
    assert expert.test_instances == 2 and random.test_instances == 2
    assert expert.figures["resolved_test"] is not None
    assert expert.figures["resolved_test"].seeds == 2
    teams = [r for r in rows if r.team]
    assert {r.family for r in teams} == {
        "meta-sre/payment-bad-deploy-v2",
        "meta-sre/split-evidence-v2",
    }
    for row in teams:
        assert set(row.credit) == set(row.seats)
        assert row.messages > 0
        assert row.sla_minutes == 30.0


@pytest.mark.parametrize(
    ("outcomes", "k", "at", "hat"),
    [
        ([1, 1, 0, 0], 1, 0.5, 0.5),
        ([1, 1, 0, 0], 2, 5 / 6, 1 / 6),
        ([1, 0, 0, 0], 2, 0.5, 0.0),
        ([1, 1, 1, 1], 3, 1.0, 1.0),
        ([0, 0, 0], 3, 0.0, 0.0),
    ],
    ids=["half-k1", "half-k2", "one-of-four-k2", "all-k3", "none-k3"],
)
def test_pass_at_k_and_pass_hat_k(outcomes: list[int], k: int, at: float, hat: float) -> None:
    tries = {("f", 0): [float(o) for o in outcomes]}
    assert pass_k(tries, k, every=False) == pytest.approx(at)
    assert pass_k(tries, k, every=True) == pytest.approx(hat)
    # Instances tried fewer than k times are left out, not counted as failures.
    assert pass_k({**tries, ("f", 1): [1.0]}, k, every=True) == pytest.approx(
        hat if k > 1 else (hat + 1) / 2
    )


def test_a_thousand_episodes_build_in_seconds_and_stay_small(
    played: Played, tmp_path: Path
) -> None:
    """The issue's bound: 1,000 episodes in under 10 s and 10 MB (real episodes, relabelled)."""
    records = []
    for store in played.stores.values():
        exported = _export(store, tmp_path / f"{store.stem}.jsonl")
        records += [json.loads(line) for line in exported.read_text().splitlines()]
    big = tmp_path / "big.jsonl"
    with big.open("w") as f:
        for i in range(1000):
            record = dict(records[i % len(records)])
            record["session_id"] = f"s{i:04d}"
            record["seed"] = i // len(records)
            f.write(json.dumps(record) + "\n")
    started = time.perf_counter()
    report = build_report(read_runs([str(big)]))
    seconds = time.perf_counter() - started
    size = len(report.html.encode())
    print(f"1000 episodes: {seconds:.1f} s, {size / 1e6:.1f} MB")
    assert report.episodes == 1000
    assert size < 10_000_000
    assert seconds < 10


def test_bad_inputs_say_what_to_do(
    played: Played, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "r.html")
    cases = {
        "missing": (str(tmp_path / "nope.db"), 2, "no file"),
        "not json": (_write(tmp_path / "a.jsonl", "hello\n"), 2, "line 1 is not JSON"),
        "not an episode": (_write(tmp_path / "b.jsonl", '{"x": 1}\n'), 2, "no session_id"),
        "a list": (_write(tmp_path / "c.jsonl", "[1, 2]\n"), 2, "not a family's verdict"),
        "empty": (_write(tmp_path / "d.jsonl", "\n"), 2, "no finished episode"),
        "a list of strings": (_write(tmp_path / "e.json", '["x"]'), 2, "nor an export"),
        "a broken list": (_write(tmp_path / "f.json", "[{"), 2, "is not JSON"),
        "verdicts alone": (str(played.validation), 2, "only validation verdicts given"),
    }
    for name, (source, code, said) in cases.items():
        assert main(["report", source, "--out", out]) == code, name
        err = capsys.readouterr().err
        assert said in err and "Traceback" not in err, (name, err)
        assert len(err.strip().splitlines()) == 1, (name, err)
    store = str(played.stores["expert"])
    assert main(["report", store, "--out", str(tmp_path / "no" / "r.html")]) == 7
    assert "does not exist" in capsys.readouterr().err


def _write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


def test_two_runs_are_compared_like_with_like(played: Played, tmp_path: Path) -> None:
    exported = _export(played.stores["expert"], tmp_path / "expert.jsonl")
    same = [f"before={played.stores['expert']}", f"after={exported}"]
    runs = read_runs(same)
    rows, _ = rows_of(runs)
    # The same configuration in both runs is kept apart, named after its run.
    assert {r.config for r in rows} == {"before: expert", "after: expert"}
    compared = comparison_of(runs, rows)
    assert compared is not None
    assert compared["like_with_like"] == ["expert"] and compared["changed"] == []
    assert [f["episodes"] for f in compared["families"]] == [[4, 4], [4, 4]]
    # Different agents: compared as wholes; every instance the random agent lost is listed.
    runs = read_runs([f"before={played.stores['expert']}", f"after={played.stores['random']}"])
    rows, _ = rows_of(runs)
    compared = comparison_of(runs, rows)
    assert compared is not None and compared["like_with_like"] == []
    assert {(c["family"], c["seed"]) for c in compared["changed"]} == {
        (f"meta-sre/{family}", seed)
        for family in ("payment-bad-deploy-v2", "split-evidence-v2")
        for seed in (2, 3)
    }
    assert all(
        c["resolved_before"] == 1.0 and c["resolved_after"] == 0.0 for c in compared["changed"]
    )


def test_without_the_report_extra_it_says_what_to_install(played: Played, tmp_path: Path) -> None:
    import subprocess
    import sys

    # An interpreter where Plotly cannot be imported, as without `pip install 'metasre[report]'`.
    code = (
        "import sys\n"
        "class NoPlotly:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'plotly':\n"
        "            raise ModuleNotFoundError(\"No module named 'plotly'\", name='plotly')\n"
        "sys.meta_path.insert(0, NoPlotly())\n"
        "from metasre.cli.main import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    out = tmp_path / "r.html"
    done = subprocess.run(
        [sys.executable, "-c", code, "report", str(played.stores["expert"]), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "pip install 'metasre[report]'" in done.stderr and "Traceback" not in done.stderr
    assert not out.exists()
