"""Scripted policies: the expert, the random baseline, the probes, the shallow rules."""

from metasre.agents.policies.base import Policy, ToolCaller, ToolReply
from metasre.agents.policies.expert import ExpertPolicy
from metasre.agents.policies.probes import HINTED, PROBES, SHOTGUNS
from metasre.agents.policies.random_agent import RandomPolicy

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
