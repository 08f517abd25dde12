"""One catalogue holds what episodes share: two of them share nothing, and reload forgets."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from metasre.simulator import Episode
from metasre.simulator.catalog import Catalog, default_catalog
from metasre.simulator.sandbox import (
    ProbeReport,
    ProbeRunner,
    SandboxLimits,
    default_grader_runner,
    default_traffic_runner,
)

AD = "meta-sre/ad-ranking-crash-v2"


@dataclass
class Recording:
    """A real runner that counts the runs it serves."""

    inner: ProbeRunner
    runs: list[str] = field(default_factory=list)

    def observe(
        self,
        files: Mapping[str, bytes],
        probe_file: str,
        probes: Sequence[str],
        *,
        limits: SandboxLimits | None = None,
    ) -> ProbeReport:
        self.runs.append(probe_file)
        return self.inner.observe(files, probe_file, probes, limits=limits)

    def close(self) -> None:
        """The shared runner is not ours to close."""


def _catalog() -> tuple[Catalog, Recording, Recording]:
    grader, traffic = Recording(default_grader_runner()), Recording(default_traffic_runner())
    return Catalog(grader=grader, traffic=traffic), grader, traffic


def _graded_off_the_reference(catalog: Catalog) -> None:
    """The reference fix plus a comment line: code the grader has to run, not recognise."""
    episode = Episode.make(AD, 0, catalog=catalog)
    solution = episode.instance.spec.solution
    for step in solution[:-1]:
        episode.apply("fixer", step.tool, dict(step.args))
    fixed = next(s for s in solution if s.tool == "edit_lines").args["path"]
    end = len(episode.workspace.read(str(fixed)).splitlines()) + 1
    episode.apply(
        "fixer",
        "edit_lines",
        {"path": fixed, "action": "insert", "start_line": end, "content": "# checked"},
    )
    episode.apply("fixer", solution[-1].tool, dict(solution[-1].args))
    assert episode.grade().resolved


def test_two_catalogues_share_no_memo_and_reload_forgets_one():
    first, first_grader, first_traffic = _catalog()
    second, second_grader, _ = _catalog()
    _graded_off_the_reference(first)
    assert first_grader.runs and first_traffic.runs
    ran = len(first_grader.runs)
    _graded_off_the_reference(first)
    assert len(first_grader.runs) == ran  # the same code again: answered from its memo
    _graded_off_the_reference(second)
    assert second_grader.runs  # another catalogue runs for itself
    first.reload()
    _graded_off_the_reference(first)
    assert len(first_grader.runs) > ran


def test_an_episode_without_a_catalogue_uses_the_process_s_own():
    episode = Episode.make(AD, 0)
    assert episode.grade().total >= 0.0
    assert default_catalog() is default_catalog()
    assert Catalog().with_runner(None).runner is default_catalog().runner
