"""What a grader run can read reveals only the probe calls, and it looks like a traffic run.

Code under test runs inside every probe run and can read whatever its process holds: the
files of the run folder, its command line, its environment, the request its child read. These
tests record, through a runner that wraps the real one, every request the grader and the
traffic send while two seeds of ad-ranking-crash (different crashing sites, different
FAIL_TO_PASS checks) are played, and check that

* the grader's requests are the same for both seeds but for the code under test: the same
  probe module (no docstrings, no comments, no list of the seed's checks) at the same path,
  the same probe names in the same order; none carries an expected value (the reference's
  observations stay on the trusted side);
* no grader request is made before the episode ends;
* a grader run and a traffic run see the same world from inside: the module's path, the
  command line, the environment, the folder's listing, the clock and the random streams are
  the same (a probe that reports them observes the same through both runners).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from metasre.simulator import Episode
from metasre.simulator.hidden import HiddenChecks
from metasre.simulator.probe_calls import PROBE_PATH
from metasre.simulator.sandbox import (
    ProbeReport,
    ProbeRunner,
    SandboxLimits,
    default_grader_runner,
    default_traffic_runner,
)
from metasre.simulator.scenarios.registry import resolve
from metasre.simulator.traffic import TrafficCheck

AD = "ad-ranking-crash"
SEEDS = (10, 24)  # a missing feature row; bids left as strings: other sites, other checks


@dataclass
class Recording:
    """A real runner that remembers every request it serves."""

    inner: ProbeRunner
    requests: list[tuple[dict[str, bytes], str, list[str]]] = field(default_factory=list)

    def observe(
        self,
        files: Mapping[str, bytes],
        probe_file: str,
        probes: Sequence[str],
        *,
        limits: SandboxLimits | None = None,
    ) -> ProbeReport:
        self.requests.append((dict(files), probe_file, list(probes)))
        return self.inner.observe(files, probe_file, probes, limits=limits)

    def close(self) -> None:
        """The shared runner is not ours to close."""


def _play(seed: int) -> tuple[Recording, Recording, HiddenChecks, Episode, int]:
    grader, traffic = Recording(default_grader_runner()), Recording(default_traffic_runner())
    hidden = HiddenChecks(grader)
    episode = Episode(resolve(AD).instance(seed), hidden=hidden, traffic=TrafficCheck(traffic))
    solution = episode.instance.spec.solution
    for step in solution[:-1]:
        episode.apply("fixer", step.tool, dict(step.args))
    # one line more than the reference, so the grader runs this code rather than knowing it
    fixed = next(s for s in solution if s.tool == "edit_lines").args["path"]
    end = len(episode.workspace.read(str(fixed)).splitlines()) + 1
    episode.apply(
        "fixer",
        "edit_lines",
        {"path": fixed, "action": "insert", "start_line": end, "content": "# checked"},
    )
    before_the_end = len(grader.requests)
    episode.apply("fixer", solution[-1].tool, dict(solution[-1].args))
    return grader, traffic, hidden, episode, before_the_end


def test_a_grader_run_reads_the_calls_and_nothing_of_the_answer_key() -> None:
    plays = [_play(seed) for seed in SEEDS]
    checks = [set(p[3].instance.spec.hidden.fail_to_pass) for p in plays]
    assert checks[0] != checks[1], "the two seeds must differ in their checks"
    shapes = []
    for grader, _traffic, hidden, episode, before_the_end in plays:
        assert before_the_end == 0, "the grader ran before the episode ended"
        assert grader.requests, "the end graded nothing"
        grade = episode.grade()
        assert grade.resolved
        expected = hidden.expected(episode.instance, lambda e=episode: e._reference_files())
        for files, probe_file, probes in grader.requests:
            assert probe_file == PROBE_PATH
            module = files[PROBE_PATH].decode()
            assert '"""' not in module and "#" not in module.replace("'#", "")
            assert "hidden/" not in module and not any(p.startswith("hidden/") for p in files)
            for check in episode.instance.spec.hidden.fail_to_pass:
                assert check not in module
            blob = b"\n".join(files.values())
            for observation in expected.values():
                if len(observation) >= 24:  # long enough to be an answer, not a common token
                    assert observation.encode() not in blob, observation[:80]
            shapes.append((module, probes))
    # the same module and the same calls for both seeds: nothing says which checks must flip
    assert all(shape == shapes[0] for shape in shapes)


PROBE_FINGERPRINT = b"""
import os, random, sys, time, datetime

def fingerprint():
    here = os.getcwd()
    return {
        "argv": sys.argv, "orig_argv": sys.orig_argv,
        "env": {k: v for k, v in os.environ.items() if k != "TMPDIR"},
        "tmpdir": os.environ.get("TMPDIR", "").replace(here, "."),
        "listing": sorted(os.listdir(".")), "module": __file__.replace(here, "."),
        "path": [p.replace(here, ".") for p in sys.path[:3]],
        "flags": list(sys.flags), "time": time.time(), "mono": time.monotonic(),
        "now": datetime.datetime.now().isoformat(), "random": random.random(),
        "urandom": os.urandom(8).hex(), "hash": hash("metasre"),
        "folder": os.path.basename(os.path.dirname(here)).split("-")[:2],
    }
"""


def test_from_inside_a_grader_run_and_a_traffic_run_look_the_same() -> None:
    files = {"svc/__init__.py": b"X = 1\n", PROBE_PATH: PROBE_FINGERPRINT}
    seen = []
    for runner in (default_grader_runner(), default_traffic_runner()):
        report = runner.observe(files, PROBE_PATH, ["fingerprint"])
        assert report.status == "completed", report.message
        seen.append(report.observation("fingerprint"))
    assert seen[0] == seen[1]
