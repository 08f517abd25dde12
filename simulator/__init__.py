"""The incident world: a deterministic simulator of production incidents, with no wire code.

An episode is a pure function of (scenario id, seed, ordered tool calls):

    episode = Episode.make("ad-ranking-crash", seed=7)
    result = episode.apply("agent-1", "read_logs", {"service": "ad_ranking"})
"""

from metasre.simulator.episode import Episode, EpisodePhase, StepResult
from metasre.simulator.errors import (
    EpisodeOverError,
    InvalidToolCallError,
    SimulatorError,
    UnknownToolError,
)
from metasre.simulator.grader import Grade, GradeComponent
from metasre.simulator.observation import Observation
from metasre.simulator.report import IncidentReport
from metasre.simulator.rewards import RewardUpdate
from metasre.simulator.scenarios.registry import resolve, scenario_ids
from metasre.simulator.tools import TOOLS, Tool, ToolOutput

__all__ = [
    "TOOLS",
    "Episode",
    "EpisodeOverError",
    "EpisodePhase",
    "Grade",
    "GradeComponent",
    "IncidentReport",
    "InvalidToolCallError",
    "Observation",
    "RewardUpdate",
    "SimulatorError",
    "StepResult",
    "Tool",
    "ToolOutput",
    "UnknownToolError",
    "resolve",
    "scenario_ids",
]
