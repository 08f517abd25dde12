"""A TRL `environment_factory` over the wire: one seat per instance, one method per tool.

    from metasre.agents.trl_env import trl_environment
    from trl import GRPOConfig, GRPOTrainer

    MetasreEnv = trl_environment("127.0.0.1:50051", scenario="payment-bad-deploy")
    trainer = GRPOTrainer(model=..., train_dataset=dataset, environment_factory=MetasreEnv,
                          args=GRPOConfig(...))

`trl_environment` asks the server for its tools and returns a class with a no-argument
constructor, as TRL wants: `reset(**columns)` opens a session for the row's `scenario` and
`seed` columns (else the factory's scenario and seed 0) and returns the page, which TRL adds to
the prompt; each META-SRE tool is a method whose signature and Google-style docstring carry the
tool's JSON Schema (TRL reads them with `transformers.utils.get_json_schema`); `get_reward()`
is the seat's reward so far: shaping as calls apply and, once the report is filed (or the step
budget runs out), the grade as the session attributes it. A call the server refuses comes back
as its error text, for the model to read (unknown or missing arguments included: the server
names the fields); a call after the episode ended raises, which TRL hands to the model as an
error. Nothing here imports TRL or torch.
"""

from __future__ import annotations

import inspect
import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from .env_session import SessionSettings, SteppedSession
from .sync import SyncClient

_CLIENTS: dict[tuple[str, str | None], SyncClient] = {}
_CLIENTS_LOCK = threading.Lock()


def shared_client(target: str, admin_token: str | None = None) -> SyncClient:
    """One client (one channel, one loop thread) per server for every instance of a process.

    Trainers make an environment per rollout; a channel each would cost a thread each.
    """
    with _CLIENTS_LOCK:
        client = _CLIENTS.get((target, admin_token))
        if client is None:
            client = _CLIENTS[(target, admin_token)] = SyncClient(target, admin_token=admin_token)
        return client


class MetasreToolEnv:
    """What every class `trl_environment` makes shares: a seat, its session, its reward.

    Subclasses set `_target`, `_admin_token`, `_scenario`, `_settings`; their public methods
    are the tools (TRL's rule: every public function of the class is a tool).
    """

    _target = ""
    _admin_token: str | None = None
    _scenario = ""
    _settings = SessionSettings()
    _max_actions = 100

    def __init__(self) -> None:
        client = shared_client(self._target, self._admin_token)
        self._session = SteppedSession(client, self._settings, max_actions=self._max_actions)
        self._agent = ""
        self._reward = 0.0

    def reset(self, **kwargs: Any) -> str:
        """Open a new episode for the dataset row: its `scenario` and `seed` columns if any."""
        scenario = str(kwargs.get("scenario") or kwargs.get("scenario_id") or self._scenario)
        seed = int(kwargs.get("seed") or 0)
        observations, _ = self._session.reset(scenario, seed)
        (self._agent,) = observations
        self._reward = 0.0
        return str(observations[self._agent]["text"])

    def get_reward(self) -> float:
        """The seat's reward so far; with the grade once the episode has ended."""
        return self._reward

    def _call(self, tool: str, args: Mapping[str, Any]) -> str:
        if not self._session.agents:
            raise ValueError(
                "the episode is over (the report was filed or the step budget ran out); "
                "no more calls"
            )
        sent = {k: v for k, v in args.items() if v is not None}  # the server's defaults
        out = self._session.step({self._agent: json.dumps({"tool": tool, "args": sent})})
        self._reward = round(self._reward + out.rewards[self._agent], 9)
        return str(out.observations[self._agent]["text"])


def trl_environment(
    target: str,
    *,
    scenario: str = "payment-bad-deploy",
    seat: Any = "agent",
    reward_mode: str = "DENSE",
    admin_token: str | None = None,
    max_actions: int = 100,
) -> type[MetasreToolEnv]:
    """A class for TRL's `environment_factory` (see the module docstring).

    Args:
        target: The server's address.
        scenario: The scenario of rows that name none.
        seat: The seat played (an agent id, (agent id, role), or a mapping).
        reward_mode: DENSE or SPARSE.
        admin_token: Sent with the client's calls.
        max_actions: Calls per episode before it is truncated.
    """
    tools = shared_client(target, admin_token).list_tools()
    namespace: dict[str, Any] = {
        "__doc__": f"One seat of a META-SRE incident on {target} (scenario {scenario}).",
        "__module__": __name__,
        "_target": target,
        "_admin_token": admin_token,
        "_scenario": scenario,
        "_settings": SessionSettings(seats=(seat,), reward_mode=reward_mode),
        "_max_actions": max_actions,
    }
    for tool in tools:
        namespace[str(tool["name"])] = tool_method(tool)
    return type("MetasreTRLEnv", (MetasreToolEnv,), namespace)


def tool_method(tool: Mapping[str, Any]) -> Any:
    """A method calling `tool`, whose signature and docstring carry the tool's JSON Schema."""
    name = str(tool["name"])
    schema = tool.get("input_schema") or {}
    properties: Mapping[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {"return": str}
    lines = []
    # Required parameters first: Python wants them before the ones with a default.
    for prop in sorted(properties, key=lambda p: p not in required):
        spec = properties[prop]
        hint = python_type(spec)
        default = inspect.Parameter.empty if prop in required else None
        if prop not in required:
            hint = hint | None
        params.append(
            inspect.Parameter(
                prop, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=hint
            )
        )
        annotations[prop] = hint
        description = " ".join(str(spec.get("description") or prop).split())
        lines.append(f"    {prop}: {description}")

    def method(self: MetasreToolEnv, **kwargs: Any) -> str:
        return self._call(name, kwargs)

    method.__name__ = method.__qualname__ = name
    method.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    method.__annotations__ = annotations
    summary = " ".join(str(tool.get("description") or name).split())
    method.__doc__ = summary + ("\n\nArgs:\n" + "\n".join(lines) if lines else "") + "\n"
    return method


def python_type(spec: Mapping[str, Any]) -> Any:
    """The Python type whose JSON Schema (as `get_json_schema` writes it) is `spec`'s."""
    options = [s for s in spec.get("anyOf") or () if s.get("type") != "null"]
    if options:
        hints = [python_type(s) for s in options]
        union = hints[0]
        for hint in hints[1:]:
            union = union | hint
        return union
    if "enum" in spec:
        return Literal[tuple(spec["enum"])]
    kind = spec.get("type")
    if kind == "array":
        return list[python_type(spec.get("items") or {})]  # type: ignore[misc]
    return _SCALARS.get(str(kind), Any)


_SCALARS: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "object": dict,
}


def tool_names(env: type[MetasreToolEnv]) -> Sequence[str]:
    """The tools an environment class offers, found the way TRL finds them."""
    return [
        name
        for name, _ in inspect.getmembers(env, predicate=inspect.isfunction)
        if name not in ("reset", "get_reward") and not name.startswith("_")
    ]


__all__ = [
    "MetasreToolEnv",
    "python_type",
    "shared_client",
    "tool_method",
    "tool_names",
    "trl_environment",
]
