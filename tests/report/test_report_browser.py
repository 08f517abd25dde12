"""The report of real rollouts in headless Chromium: it draws, shows episodes, fetches nothing.

One Chromium run serves the first tests (a browser's start is most of the cost): the page opened
on a chosen team episode, its DOM dumped once its scripts finished, and a screenshot taken.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from metasre.cli.main import main
from metasre.service import TrajectoryStore, episodes

from .browser import Element, chromium, dump_dom, parse, probe_of, probed
from .conftest import Played

# Under `pytest -n`: a session fixture is made once per worker, and the folder's rollouts
# (conftest `played`) are dear: every report test runs on the one worker that makes them.
pytestmark = pytest.mark.xdist_group("report")

README_SHOT = Path(__file__).resolve().parents[2] / "docs" / "report.png"
"""The README's picture of the report, made by this test with METASRE_UPDATE_README_SHOT=1."""


def _records(store: Path) -> list[dict[str, Any]]:
    s = TrajectoryStore(store)
    try:
        return list(episodes(s))
    finally:
        s.close()


@dataclass(frozen=True)
class Opened:
    """The report as Chromium showed it."""

    root: Element
    probe: dict[str, Any]
    chosen: dict[str, Any]
    key: str
    screenshot: Path


@pytest.fixture(scope="module")
def opened(played: Played, tmp_path_factory: pytest.TempPathFactory) -> Opened:
    chromium()
    folder = tmp_path_factory.mktemp("report-page")
    out = folder / "report.html"
    inputs = [*(f"{a}={s}" for a, s in played.stores.items()), str(played.validation)]
    code = main(["report", *inputs, "--out", str(out)])
    assert code == 0
    chosen = next(
        r
        for r in _records(played.stores["team"])
        if "split-evidence" in r["scenario_id"] and r["seed"] == 3
    )
    key = f"team/{chosen['session_id']}/{chosen['episode']}"
    shot = folder / "report.png"
    dom = dump_dom(
        probed(out, folder),
        folder / "profile",
        fragment="episode=" + key.replace("/", "%2F"),
        screenshot=shot,
    )
    print(f"report: {out}\nscreenshot: {shot}")
    root = parse(dom)
    return Opened(root, probe_of(root), chosen, key, shot)


def test_the_page_renders_every_plot_without_errors_or_network(opened: Opened) -> None:
    assert opened.probe["rendered"] == "yes"
    assert opened.probe["errors"] == [] and opened.probe["console"] == []
    # Everything is in the file: the page loaded nothing, not even from disk.
    assert opened.probe["resources"] == []
    root = opened.root
    plots = [e for e in root.walk() if "plot" in e.classes() and e.attrs.get("data-figure")]
    names = {p.attrs["data-figure"] for p in plots}
    # Three agents, two teams of different seats, the expert twice per instance, three runs.
    assert {
        "headline",
        "components",
        "matrix",
        "passk",
        "credit",
        "validity",
        "comparison",
    } <= names
    for plot in plots:
        svgs = [e for e in plot.walk() if "main-svg" in e.classes()]
        assert svgs, f"figure {plot.attrs['data-figure']} was not drawn"
    matrix = root.by_id("plot-matrix").all_text()
    for family in ("payment-bad-deploy-v2", "split-evidence-v2"):
        assert family in matrix
    # The expert resolved its four episodes of each family, random none of its two.
    assert "4/4" in matrix and "0/2" in matrix
    # What validate measured, family by family: all valid, the reference and expert at 1.
    verdicts = [
        [c.all_text().strip() for c in row.children if c.tag in ("th", "td")]
        for table in root.walk()
        if table.tag == "table" and "verdicts" in table.classes()
        for row in table.walk()
        if row.tag == "tr" and row.attrs.get("class") == "pass"
    ]
    assert [v[:4] for v in verdicts] == [
        ["payment-bad-deploy-v2", "valid", "2", "1.00"],
        ["split-evidence-v2", "valid", "2", "1.00"],
    ]
    summary = root.by_id("summary").all_text()
    for config in ("expert", "random", "team: commander+investigator+fixer"):
        assert config in summary
    assert "resolved, test split" in summary and "2 test" in summary


def test_the_viewer_shows_the_chosen_episode_s_calls_on_its_timeline(opened: Opened) -> None:
    chosen, root = opened.chosen, opened.root
    steps = chosen["steps"]
    assert len({s["agent_id"] for s in steps}) == 2  # the two roles of split-evidence
    viewer = root.by_id("viewer")
    assert viewer.attrs["data-episode"] == opened.key
    calls = [e for e in viewer.walk() if e.tag == "li" and "call" in e.classes()]
    assert [c.attrs["data-tool"] for c in calls] == [s["tool"] for s in steps]
    assert [int(c.attrs["data-tick"]) for c in calls] == [s["tick"] for s in steps]
    # Results are there, collapsed: each call's text inside a closed <details>.
    results = [m["content"] for m in chosen["messages"] if m["role"] == "tool"]
    for call, result in zip(calls, results, strict=True):
        details = next(e for e in call.walk() if e.tag == "details")
        assert "open" not in details.attrs
        assert result[:300].strip() in details.all_text()
    # The messages the seats sent read as messages.
    sent = [c for c in calls if "message" in c.classes()]
    assert len(sent) == sum(1 for s in steps if s["tool"] == "send_message") > 0
    # The timeline: one point per call, and the SLA line.
    timeline = root.by_id("viewer-timeline")
    points = [e for e in timeline.walk() if e.tag == "path" and "point" in e.classes()]
    assert len(points) == len(steps)
    assert "SLA 30" in timeline.all_text()
    # Under it, each seat's running reward: one line per seat.
    lines = [e for e in timeline.walk() if e.tag == "path" and "js-line" in e.classes()]
    assert len(lines) == 2
    # Seed 3 of split-evidence is on the family's test split, and the viewer says so.
    assert "test split" in root.by_id("viewer-head").all_text()
    grade = root.by_id("viewer-grade").all_text()
    assert f"{chosen['grade']['total']:.3f}" in grade


def test_a_screenshot_of_the_report(opened: Opened) -> None:
    assert opened.screenshot.stat().st_size > 50_000
    assert opened.screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    if os.environ.get("METASRE_UPDATE_README_SHOT") == "1":
        README_SHOT.parent.mkdir(exist_ok=True)
        shutil.copyfile(opened.screenshot, README_SHOT)


HOSTILE = (
    "</script><script>window.__pwned = true</script>",
    '<img src="http://127.0.0.1:9/x.png" onerror="window.__pwned = true">',
    "<!-- <script>window.__pwned = true</script>",
    '\u2028\u2029</SCRIPT ><svg onload="window.__pwned=true">',
)


def test_agent_written_text_stays_text(played: Played, tmp_path: Path) -> None:
    """Trajectories hold what agents wrote: markup in it must not run, load or break the page."""
    chromium()
    forged = []
    for i, record in enumerate(_records(played.stores["expert"])[:2]):
        text = HOSTILE[i % 4] + HOSTILE[(i + 1) % 4]
        record["agents"][0]["agent_id"] = text  # a seat's name: in tables, plots and the viewer
        for step in record["steps"]:
            step["agent_id"] = text
        for message in record["messages"]:
            if message["role"] == "tool":
                message["content"] = text + message["content"]
            if message["role"] == "assistant":
                message["name"] = text
                message["tool_calls"][0]["function"]["arguments"] = json.dumps({"service": text})
        record["scenario_id"] = HOSTILE[2] + HOSTILE[3]
        record["agent_rewards"] = {text: 1.0}
        forged.append(record)
    source = tmp_path / "hostile.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in forged))
    out = tmp_path / "hostile.html"
    assert main(["report", str(source), "--out", str(out)]) == 0
    root = parse(dump_dom(probed(out, tmp_path), tmp_path / "profile"))
    probe = probe_of(root)
    assert probe["rendered"] == "yes", probe
    assert probe["pwned"] is False
    assert probe["resources"] == []
    handlers = [(e.tag, a) for e in root.walk() for a in e.attrs if a.startswith("on")]
    assert handlers == []
    assert "window.__pwned = true</script>" in root.by_id("viewer-calls").all_text()
