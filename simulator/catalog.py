"""What the episodes of a process share, in one object: runners, judges and their memos.

An episode is a function of its scenario, seed and calls, but making and grading it goes
through state kept across episodes: the sandbox runner of the agents' visible suites (a cache
of reports by content), the hidden checks' judge (the reference world's observations by
scenario and seed), the production traffic's judge (likewise), and the loader's renderings.
A `Catalog` holds them, so that two servers or two tests in one process can each have their
own (`Episode.make(..., catalog=)`, `build_server(..., catalog=)`), and `reload()` forgets
everything derived from scenario files at once. `default_catalog()` is the process's own,
which an episode uses when given none.
"""

from __future__ import annotations

import threading

from .hidden import HiddenChecks
from .sandbox import ProbeRunner, TestRunner, default_runner
from .scenarios import loader, mix, registry
from .traffic import TrafficCheck


class Catalog:
    """The runners and judges episodes are made with, and their memos.

    Args:
        runner: Where the agents' visible suites run; the process's shared runner when None.
        grader: The grader runner the hidden checks probe in; the shared one when None.
        traffic: The runner the production traffic is served in; the shared one when None.
    """

    def __init__(
        self,
        runner: TestRunner | None = None,
        *,
        grader: ProbeRunner | None = None,
        traffic: ProbeRunner | None = None,
    ) -> None:
        self._runner = runner
        self.hidden = HiddenChecks(grader)
        """Judges the hidden checks; keeps the reference world's observations."""
        self.traffic = TrafficCheck(traffic)
        """Serves and judges the production traffic; keeps the reference's responses."""

    @property
    def runner(self) -> TestRunner:
        """The runner of the agents' visible suites."""
        if self._runner is None:
            self._runner = default_runner()
        return self._runner

    def with_runner(self, runner: TestRunner | None) -> Catalog:
        """This catalogue with another visible runner (None: this one's), judges shared."""
        if runner is None:
            return self
        other = Catalog(runner)
        other.hidden, other.traffic = self.hidden, self.traffic
        return other

    def reload(self) -> None:
        """Forget what was derived from scenario files: renderings and the judges' memos.

        The list of families, the files read, every rendering (mixes' too), and this
        catalogue's hidden checks' and traffic's memos. For authoring tools that rewrite a
        family in a running process: the next episode reads the files anew and runs the
        reference world again. A server never needs it (families never change in place).
        The process's other module memos are keyed by content or are pure functions of their
        arguments, so nothing in them goes stale (`tests/simulator/test_catalog.py` lists them).
        """
        registry.reload()
        loader.reload()
        mix.mixed_instance.cache_clear()
        mix._catalogue.cache_clear()
        self.hidden.clear()
        self.traffic.clear()


_default: Catalog | None = None
_default_lock = threading.Lock()


def default_catalog() -> Catalog:
    """The process's own catalogue, over the shared sandbox runners (made on first use)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Catalog()
        return _default


__all__ = ["Catalog", "default_catalog"]
