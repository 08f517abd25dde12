"""Errors raised while finding, reading and rendering scenarios."""

from __future__ import annotations


class ScenarioError(Exception):
    """Base class of the scenario package's errors."""


class UnknownScenarioError(ScenarioError, LookupError):
    """Raised when a scenario id is not in the registry."""


class InvalidScenarioError(ScenarioError, ValueError):
    """Raised when a scenario folder does not match the documented format."""
