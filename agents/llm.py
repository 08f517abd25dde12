"""An LLM agent for any OpenAI-compatible chat-completions endpoint (vLLM, Ollama, hosted APIs).

The model sees the tools' JSON Schemas (from ListTools) as functions, a system prompt and the
page; each tool call it makes is carried by a `ToolCaller` and its result goes back as a `tool`
message. Malformed calls (unknown tool, arguments that are not JSON, arguments the server
refuses) are answered with an error tool message so the model can correct itself; they never
crash the agent. Only the standard library talks HTTP:

    config = LLMConfig.from_env(model="qwen2.5:7b")   # METASRE_LLM_BASE_URL, ..._API_KEY
    LLMPolicy(config, client.list_tools()).play(WireCaller(agent), agent.observation)
"""

from __future__ import annotations

import itertools
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from .policies.base import ToolCaller, ToolReply

BASE_URL_ENV = ("METASRE_LLM_BASE_URL", "OPENAI_BASE_URL")
"""Environment variables naming the endpoint, first set wins."""
MODEL_ENV = ("METASRE_LLM_MODEL",)
"""Environment variables naming the model."""
API_KEY_ENV = ("METASRE_LLM_API_KEY", "OPENAI_API_KEY")
"""Environment variables holding the API key, first set wins."""

SYSTEM_PROMPT = """\
You are the on-call site reliability engineer for a production system and you have just been \
paged. Investigate the incident with the tools you are given (logs, metrics, alerts, the \
dependency graph, service descriptions, code, git history and blame, tests), find the root \
cause, fix it (edit the code and run the matching test suite, or roll back a deployment or a \
migration, restart or scale a service), then file the incident report.

Rules:
- Act only through tool calls; call one tool at a time and read its result before the next.
- Every call costs simulated minutes and one step of a limited budget; the SLA clock is running.
- Fix the cause, not the symptom: do not edit tests or silence errors.
- submit_report ends the episode for the whole team: call it once, after the fix is verified.

Tools:
{tools}
"""
NUDGE = (
    "Your last reply had no tool call. Continue the investigation with a tool call; when the "
    "incident is fixed, call submit_report, which ends the episode."
)
TEAM_PROMPT = """
You work in a team of three seats: {seats}. You are {role}. {duty}
Teammates' messages reach you as user messages that start with "Message from <id>:". Tell them \
what you found or did with send_message (to: their ids); do not repeat a look a teammate \
already reported. Reply without a tool call to wait for a teammate's message.
"""
ROLE_DUTIES = {
    "commander": (
        "You lead: triage the page, tell the investigator where to look, keep the others "
        "informed, and file the incident report (only you may call submit_report) once the "
        "fixer says the fix is verified."
    ),
    "investigator": (
        "Find the root cause from the evidence (logs, metrics, the dependency graph, code and "
        "git history) and send your diagnosis, with the evidence, to the fixer and the "
        "commander. Do not change anything."
    ),
    "fixer": (
        "Wait for the investigator's diagnosis, apply the remedy it calls for (a code fix with "
        "its test suite, a rollback, a restart, a scale-up, a config or flag change), verify "
        "it, and tell the commander what you did."
    ),
}
"""What each role of an LLM team is asked to do (the scripted team's roles, in words)."""
TEAM_WAIT_SECONDS = 120.0
"""How long a team seat whose model chose to wait listens for a teammate before a nudge."""


class LLMEndpointError(Exception):
    """Raised when the chat-completions endpoint cannot be reached or answers with an error."""


@dataclass(frozen=True, slots=True)
class LLMConfig:
    """Where the model lives and how the agent talks to it."""

    base_url: str
    """The OpenAI-compatible API root, for example `http://127.0.0.1:11434/v1`."""
    model: str
    """The model name the endpoint serves."""
    api_key: str = field(default="", repr=False)
    """Sent as `Authorization: Bearer <key>` when set (local servers usually need none)."""
    temperature: float = 0.0
    """Sampling temperature."""
    max_tokens: int | None = None
    """Cap on each reply's tokens; None leaves it to the endpoint."""
    max_steps: int = 40
    """Chat requests per episode before the agent gives up (the step budget may end it sooner)."""
    nudges: int = 1
    """Replies without a tool call that are answered with a reminder; the next one stops play."""
    timeout_seconds: float = 120.0
    """Timeout of one HTTP request."""
    retries: int = 2
    """Extra attempts after a connection error, HTTP 429 or 5xx, with a growing pause."""

    @classmethod
    def from_env(
        cls,
        *,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        environ: Mapping[str, str] | None = None,
        **options: Any,
    ) -> LLMConfig:
        """A config from explicit values, falling back to the environment.

        Raises:
            ValueError: no base URL or no model was given either way.
        """
        env = os.environ if environ is None else environ
        base_url = base_url or _first(env, BASE_URL_ENV)
        model = model or _first(env, MODEL_ENV)
        if not base_url:
            raise ValueError(
                "no chat-completions endpoint: pass --base-url or set "
                f"{' or '.join(BASE_URL_ENV)} (for example http://127.0.0.1:11434/v1)"
            )
        if not model:
            raise ValueError(f"no model: pass --model or set {MODEL_ENV[0]}")
        key = api_key if api_key is not None else _first(env, API_KEY_ENV)
        return cls(base_url=base_url, model=model, api_key=key, **options)


def _first(env: Mapping[str, str], names: Iterable[str]) -> str:
    return next((env[n] for n in names if env.get(n)), "")


class ChatEndpoint:
    """POSTs chat-completions requests with urllib; retries transient failures."""

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self.url = config.base_url.rstrip("/") + "/chat/completions"

    def complete(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]
    ) -> dict[str, Any]:
        """The first choice's message of one completion.

        Raises:
            LLMEndpointError: the endpoint failed after the retries, or answered no choice.
        """
        body: dict[str, Any] = {
            "model": self.config.model,
            "messages": list(messages),
            "tools": list(tools),
            "temperature": self.config.temperature,
        }
        if self.config.max_tokens is not None:
            body["max_tokens"] = self.config.max_tokens
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.config.api_key:
            headers["Authorization"] = f"Bearer {self.config.api_key}"
        data = json.dumps(body).encode()
        for attempt in itertools.count():
            request = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.config.timeout_seconds) as r:
                    reply = json.loads(r.read())
                break
            except urllib.error.HTTPError as exc:
                detail = exc.read().decode(errors="replace")[:500]
                transient = exc.code == 429 or exc.code >= 500
                if not transient or attempt >= self.config.retries:
                    raise LLMEndpointError(
                        f"{self.url} answered HTTP {exc.code}: {detail or exc.reason}; check the "
                        "base URL, the model name and the API key"
                    ) from None
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                if attempt >= self.config.retries:
                    raise LLMEndpointError(
                        f"cannot reach {self.url}: {exc}; is the model server running?"
                    ) from None
            except json.JSONDecodeError as exc:
                raise LLMEndpointError(f"{self.url} answered with invalid JSON: {exc}") from None
            time.sleep(0.5 * 2**attempt)
        choices = reply.get("choices") if isinstance(reply, dict) else None
        if not choices or not isinstance(choices[0].get("message"), dict):
            raise LLMEndpointError(f"{self.url} answered without choices: {str(reply)[:300]}")
        message: dict[str, Any] = choices[0]["message"]
        return message


def function_tools(tools: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """ListTools entries as chat-completions `tools` (function name, description, parameters)."""
    return [
        {
            "type": "function",
            "function": {
                "name": t["name"],
                "description": t.get("description", ""),
                "parameters": _integral(t.get("input_schema") or {"type": "object"}),
            },
        }
        for t in tools
    ]


def _integral(value: Any) -> Any:
    # protobuf Struct carries every number as a double; schemas read better (and some
    # constrained decoders insist) with maxLength 64 rather than 64.0.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {k: _integral(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integral(v) for v in value]
    return value


@dataclass(slots=True)
class LLMStats:
    """What happened in one episode, for logs and rollout tables."""

    requests: int = 0
    """Chat-completions requests made."""
    tool_calls: int = 0
    """Tool calls the model asked for, well-formed or not."""
    malformed: int = 0
    """Calls answered with an error tool message (unknown tool, bad JSON, refused arguments)."""
    nudges: int = 0
    """Replies without a tool call that were answered with a reminder."""
    stop_reason: str = ""
    """episode_over, step_limit or no_tool_call."""


class LLMPolicy:
    """Plays an episode by asking a chat model for tool calls; see the module docstring."""

    def __init__(
        self,
        config: LLMConfig,
        tools: Sequence[Mapping[str, Any]],
        endpoint: ChatEndpoint | None = None,
        on_message: Callable[[Mapping[str, Any]], None] | None = None,
        role: str = "",
        seats: Sequence[str] = (),
    ) -> None:
        self.config = config
        self.role = role
        """The seat's role in an LLM team ("" alone); see ROLE_DUTIES."""
        self.seats = tuple(seats)
        """The team's agent ids, this seat's included."""
        self.tools = function_tools(tools)
        self.endpoint = endpoint or ChatEndpoint(config)
        self.on_message = on_message
        """Called with each message as it joins the conversation (for a live transcript)."""
        self.messages: list[dict[str, Any]] = []
        """The conversation so far (system, user, assistant and tool messages)."""
        self.stats = LLMStats()

    def _say(self, message: dict[str, Any]) -> None:
        self.messages.append(message)
        if self.on_message is not None:
            self.on_message(message)

    def system_prompt(self) -> str:
        """The system message: the role, the rules and one line per tool."""
        lines = "\n".join(
            f"- {t['function']['name']}: {t['function']['description']}" for t in self.tools
        )
        prompt = SYSTEM_PROMPT.format(tools=lines)
        if self.role:
            duty = ROLE_DUTIES.get(self.role, "")
            prompt += TEAM_PROMPT.format(seats=", ".join(self.seats), role=self.role, duty=duty)
        return prompt

    def play(
        self,
        call: ToolCaller,
        observation: Mapping[str, Any],
        team: TeamInbox | None = None,
    ) -> None:
        """Converse until the episode ends, the step limit is hit or the model stops calling.

        `team`: the seat's inbox in an LLM team. Teammates' new messages join the conversation
        before each request, and a reply without a tool call waits for the next message (up to
        TEAM_WAIT_SECONDS) before it counts as a stop.

        Raises:
            LLMEndpointError: the endpoint failed (after its retries).
        """
        self.stats = LLMStats()
        page = str(observation.get("text") or json.dumps(dict(observation), default=str))
        self.messages = []
        self._say({"role": "system", "content": self.system_prompt()})
        self._say(page_message(page))
        ids = itertools.count(1)
        heard = 0
        while self.stats.requests < self.config.max_steps:
            if team is not None:
                inbox = team.messages()
                for m in inbox[heard:]:
                    self._say(heard_message(m))
                heard = len(inbox)
            self.stats.requests += 1
            reply = self.endpoint.complete(self.messages, self.tools)
            tool_calls = [c for c in reply.get("tool_calls") or () if isinstance(c, Mapping)]
            assistant: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
            if not tool_calls:
                self._say(assistant)
                if team is not None:
                    # A teammate's message, or the episode's end, decides what comes next.
                    news = team.heard(heard, TEAM_WAIT_SECONDS)
                    if team.episode_over():
                        self.stats.stop_reason = "episode_over"
                        return
                    if news:
                        continue
                if self.stats.nudges >= self.config.nudges:
                    self.stats.stop_reason = "no_tool_call"
                    return
                self.stats.nudges += 1
                self._say({"role": "user", "content": NUDGE})
                continue
            # Echo the calls back with ids (some local servers omit them) so each tool
            # message can name the call it answers.
            calls = [dict(c, id=c.get("id") or f"call_{next(ids)}") for c in tool_calls]
            assistant["tool_calls"] = [_echo(c) for c in calls]
            self._say(assistant)
            for c in calls:
                self.stats.tool_calls += 1
                text, done = self._apply(call, c)
                self._say({"role": "tool", "tool_call_id": c["id"], "content": text})
                if done:
                    self.stats.stop_reason = "episode_over"
                    return
        self.stats.stop_reason = "step_limit"

    def _apply(self, call: ToolCaller, tool_call: Mapping[str, Any]) -> tuple[str, bool]:
        """One call's tool message text, and whether the episode is over."""
        function = tool_call.get("function") or {}
        name = str(function.get("name") or "")
        raw = function.get("arguments")
        if isinstance(raw, Mapping):  # some servers send the object, not its JSON text
            args: Any = raw
        else:
            try:
                args = json.loads(raw) if raw not in (None, "") else {}
            except (TypeError, json.JSONDecodeError) as exc:
                self.stats.malformed += 1
                return (
                    f"ERROR: the arguments of {name or 'your call'} are not valid JSON ({exc}). "
                    "Send a JSON object that follows the tool's schema.",
                    False,
                )
        if not isinstance(args, Mapping):
            self.stats.malformed += 1
            return (
                f"ERROR: the arguments of {name} must be a JSON object, got "
                f"{type(args).__name__}. Send an object that follows the tool's schema.",
                False,
            )
        # Unknown tools and schema violations are the server's to judge: its refusal names
        # the valid choices and each bad field, which is exactly what the model needs.
        reply = call(name, args)
        if reply.ok or reply.done:
            return reply.text, reply.done
        if (reply.error or "").upper() in ("UNKNOWN_TOOL", "INVALID_ARGUMENTS", "INVALID_REQUEST"):
            self.stats.malformed += 1
        return refusal_text(name, reply), False


class TeamInbox(Protocol):
    """What an LLM team seat reads besides its tool results."""

    def messages(self) -> Sequence[Mapping[str, Any]]:
        """Teammates' messages received so far, oldest first."""
        ...

    def heard(self, after: int, timeout: float) -> bool:
        """Wait up to `timeout` seconds for a message beyond the first `after`; True if one came."""
        ...

    def episode_over(self) -> bool:
        """Whether the episode (or the seat's stream) has ended."""
        ...


def _echo(tool_call: Mapping[str, Any]) -> dict[str, Any]:
    function = dict(tool_call.get("function") or {})
    if isinstance(function.get("arguments"), Mapping):
        function["arguments"] = json.dumps(function["arguments"])
    return {"id": tool_call["id"], "type": "function", "function": function}


def page_message(page: str) -> dict[str, Any]:
    """The user turn that opens an episode: the page, as the seat sees it."""
    return {"role": "user", "content": f"You have been paged. The incident now:\n\n{page}"}


def heard_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """The user turn that carries a teammate's message (a `TeamMessage` as plain data)."""
    return {
        "role": "user",
        "content": f"Message from {message.get('from_agent_id')}: {message.get('text')}",
    }


def refusal_text(name: str, reply: ToolReply) -> str:
    """The tool message answering a call that was refused, in the server's or the world's words."""
    said = reply.error and reply.error in reply.text  # the wire's text names its reason
    lines = [
        f"ERROR: {reply.text}" if said else f"ERROR ({reply.error or 'refused'}): {reply.text}"
    ]
    for violation in reply.data.get("violations", ()):
        if isinstance(violation, Sequence) and len(violation) == 2:
            lines.append(f"  - {violation[0]}: {violation[1]}")
    lines.append(f"Fix the call to {name or 'the tool'} and try again.")
    return "\n".join(lines)


__all__ = [
    "API_KEY_ENV",
    "BASE_URL_ENV",
    "MODEL_ENV",
    "NUDGE",
    "ROLE_DUTIES",
    "SYSTEM_PROMPT",
    "TEAM_PROMPT",
    "ChatEndpoint",
    "LLMConfig",
    "LLMEndpointError",
    "LLMPolicy",
    "LLMStats",
    "TeamInbox",
    "function_tools",
    "heard_message",
    "page_message",
    "refusal_text",
]
