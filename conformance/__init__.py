"""The conformance suite shipped with the code: proves a family fair, seed by seed.

It plays the repository's own policies (`metasre.agents.policies`, pure Python) against
in-process episodes of the simulator, the way a client would over the wire, so a notebook or
a test can validate a family without the command line. It sits beside the service: it may
import the simulator and the agents' policies, and only the command line imports it.
"""

from .caller import EpisodeCaller
from .validate import (
    GRADING_BUDGET_MS,
    ScenarioVerdict,
    check_shallow,
    play_steps,
    validate_scenario,
)

__all__ = [
    "GRADING_BUDGET_MS",
    "EpisodeCaller",
    "ScenarioVerdict",
    "check_shallow",
    "play_steps",
    "validate_scenario",
]
