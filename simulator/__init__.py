"""The incident world: a deterministic simulator of production incidents, with no wire code.

An episode is a pure function of (scenario id, seed, ordered tool calls):

    episode = Episode.make("ad-ranking-crash", seed=7)
    result = episode.apply("agent-1", "read_logs", {"service": "ad_ranking"})
"""

from .episode import Episode, EpisodePhase, StepResult
from .errors import (
    EpisodeOverError,
    InvalidToolCallError,
    SimulatorError,
    UnknownToolError,
)
from .grader import Grade, GradeComponent
from .observation import Observation
from .report import IncidentReport
from .rewards import RewardUpdate
from .scenarios.registry import resolve, scenario_ids
from .tools import TOOLS, Tool, ToolOutput

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
