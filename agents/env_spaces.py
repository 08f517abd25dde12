"""The spaces of the Gymnasium and PettingZoo adapters: text observations, JSON tool calls.

An observation is a `Dict` of a small numeric vector (`FEATURES`, float32) beside the text an
LLM would read, escaped to the declared charset (printable ASCII: PettingZoo's `api_test` checks
every character, and log lines carry non-ASCII). An action is `Text`: one JSON tool call,
`{"tool": NAME, "args": {...}}` (or the chat-completions shape `{"name": NAME, "arguments":
{...} or "<JSON>"}`). Text that is not such a call is parsed into an error, never an exception.
The escapes, the numbers and the parsing are `metasre.agents.env_text`'s (no dependency, so the
TRL and SkyRL adapters use them without this module); this adds the spaces and the float32
vector. Needs the `gym` extra (gymnasium, numpy).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray

from .env_text import (
    ACTION_TEXT_LENGTH,
    BOUND,
    CHARSET,
    FEATURES,
    OBSERVATION_TEXT_LENGTH,
    MalformedAction,
    escape,
    feature_values,
    parse_action,
)


def observation_space(text_length: int = OBSERVATION_TEXT_LENGTH) -> spaces.Dict:
    """The observation space: `{"observation": Box(float32, FEATURES), "text": Text}`."""
    return spaces.Dict(
        {
            "observation": spaces.Box(-BOUND, BOUND, shape=(len(FEATURES),), dtype=np.float32),
            "text": spaces.Text(text_length, min_length=0, charset=CHARSET),
        }
    )


class ToolCallText(spaces.Text):
    """`Text` of one JSON tool call; `sample()` draws well-formed looks half the time.

    A uniformly random string is never a tool call, so an environment checker sampling the
    action space would exercise only the malformed path. Half of the samples are instead a
    call to one of `calls` (the tools that need no argument and only look), so the checkers
    play real calls against the server too. `contains` is Text's: any string of the charset.
    """

    def __init__(
        self, calls: Sequence[str], max_length: int = ACTION_TEXT_LENGTH, seed: int | None = None
    ) -> None:
        super().__init__(max_length, min_length=0, charset=CHARSET, seed=seed)
        self.calls = tuple(calls)

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        """A well-formed look (half the time) or a random string of the charset."""
        if mask is None and probability is None and self.calls and self.np_random.random() < 0.5:
            return str(self.calls[int(self.np_random.integers(len(self.calls)))])
        return str(super().sample(mask, probability))


def look_calls(tools: Sequence[Mapping[str, Any]]) -> list[str]:
    """JSON calls of the tools (from ListTools) that only look and need no argument."""
    return [
        json.dumps({"tool": t["name"], "args": {}})
        for t in tools
        if t.get("kind") == "investigate" and not (t.get("input_schema") or {}).get("required")
    ]


def features(
    observation: Mapping[str, Any], *, last_call_ok: bool = False, new_messages: int = 0
) -> NDArray[np.float32]:
    """The numeric vector of a wire observation (the `Observation` message as plain data)."""
    return as_vector(
        feature_values(observation, last_call_ok=last_call_ok, new_messages=new_messages)
    )


def as_vector(values: Sequence[float]) -> NDArray[np.float32]:
    """`feature_values` as the observation space's float32 vector."""
    return np.asarray(values, dtype=np.float32)


__all__ = [
    "ACTION_TEXT_LENGTH",
    "BOUND",
    "CHARSET",
    "FEATURES",
    "OBSERVATION_TEXT_LENGTH",
    "MalformedAction",
    "ToolCallText",
    "as_vector",
    "escape",
    "features",
    "look_calls",
    "observation_space",
    "parse_action",
]
