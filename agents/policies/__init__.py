"""Scripted policies: the expert, the random baseline, the probes, the shallow rules."""

from .base import Policy, ToolCaller, ToolReply
from .expert import ExpertPolicy
from .probes import HINTED, PROBES, SHOTGUNS
from .random_agent import RandomPolicy

__all__ = [
    "HINTED",
    "PROBES",
    "SHOTGUNS",
    "ExpertPolicy",
    "Policy",
    "RandomPolicy",
    "ToolCaller",
    "ToolReply",
]
