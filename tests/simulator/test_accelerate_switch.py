"""The fork server's accelerators (state carried between runs) change no report: on == off.

Everything a visible runner keeps from one run for the next (the bytecode the caller compiled,
the code dataclasses and namedtuple generated) sits behind ``accelerate``. Every suite of the
scenarios runs on an accelerated runner (twice, so the second run uses what the first taught)
and on one with nothing carried over; the reports must be equal field for field.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from metasre.simulator import Episode, sandbox

# Under `pytest -n`: two fork servers per module: one worker.
pytestmark = pytest.mark.xdist_group("accelerate-switch")

SUITES = {
    "unit": "meta-sre/ad-ranking-crash-v2",
    "integration": "meta-sre/checkout-crash-loop-v2",
    "load": "meta-sre/db-connection-leak-v2",
    "security": "meta-sre/pii-exposure-v2",
}


@pytest.fixture(scope="module")
def runners() -> Iterator[tuple[sandbox.ForkServerRunner, sandbox.ForkServerRunner]]:
    with (
        sandbox.ForkServerRunner(accelerate=True) as fast,
        sandbox.ForkServerRunner(accelerate=False) as plain,
    ):
        yield fast, plain


def _worlds(scenario: str) -> list[dict[str, bytes]]:
    start = Episode.make(scenario, 0)
    fixed = Episode.make(scenario, 0)
    fixed.play_steps([s for s in fixed.instance.spec.solution if s.tool != "submit_report"])
    return [start.workspace.snapshot(), fixed.workspace.snapshot()]


@pytest.mark.parametrize("suite", sorted(SUITES))
def test_accelerated_and_plain_runs_report_the_same(
    runners: tuple[sandbox.ForkServerRunner, sandbox.ForkServerRunner], suite: str
) -> None:
    fast, plain = runners
    for files in _worlds(SUITES[suite]):
        tests = sorted(p for p in files if p.startswith(f"tests/{suite}/test_"))
        assert tests
        first = fast.run(files, tests)
        again = fast.run(files, tests)  # now with what the first run taught the helper
        bare = plain.run(files, tests)
        assert first.outcomes  # the suite really ran
        assert first == again == bare


def test_a_grader_runner_cannot_accelerate() -> None:
    with pytest.raises(ValueError, match="cannot accelerate"):
        sandbox.ForkServerRunner(purpose="grader", accelerate=True)
