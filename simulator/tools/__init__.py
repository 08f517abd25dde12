"""The tool registry: every action an agent can take in the world."""

from .base import Args, Tool, ToolContext, ToolOutput
from .registry import TOOLS, get_tool, served_tools, validate_args

__all__ = [
    "TOOLS",
    "Args",
    "Tool",
    "ToolContext",
    "ToolOutput",
    "get_tool",
    "served_tools",
    "validate_args",
]
