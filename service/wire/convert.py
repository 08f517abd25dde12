"""Wire messages to and from the service's types (sessions, log events, grades, tools).

The servicers turn requests and replies into protobuf here; the hot replies of the agent plane
are prebuilt as bytes with `metasre.service.wire.struct_wire`'s encoder. (The simulator's types
reach the wire only through this module, but the agent SDK meets protobuf on its own side.)
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import orjson
from google.protobuf import struct_pb2

from metasre.v1 import agent_pb2, common_pb2, control_pb2

from ...simulator import TOOLS, EpisodePhase, Grade, InvalidToolCallError, Observation, Tool
from ...simulator.scenarios.registry import ScenarioEntry
from ...simulator.views import View
from ..config import Limits
from ..core.attribution import Attribution, RewardMode
from ..core.errors import InvalidRequestError
from ..core.events import Applied, Ended, LogEntry, Message, Reward, Started, Turn
from ..core.openings import OpeningForms, observation_text
from ..core.projection import SeatProjection, TeammateCall
from ..core.session import Seat, SeatSpec, Session, SessionSpec, TurnPolicy
from .struct_wire import delimited, delimited_parts, struct_bytes, tag, varint

_POLICY = {
    common_pb2.TURN_POLICY_UNSPECIFIED: TurnPolicy.FREE_FOR_ALL,
    common_pb2.TURN_POLICY_FREE_FOR_ALL: TurnPolicy.FREE_FOR_ALL,
    common_pb2.TURN_POLICY_ROUND_ROBIN: TurnPolicy.ROUND_ROBIN,
    common_pb2.TURN_POLICY_SIMULTANEOUS: TurnPolicy.SIMULTANEOUS,
}
_POLICY_PB = {v: k for k, v in _POLICY.items() if k != common_pb2.TURN_POLICY_UNSPECIFIED}
_ATTRIBUTION = {
    common_pb2.REWARD_ATTRIBUTION_UNSPECIFIED: Attribution.SHARED,
    common_pb2.REWARD_ATTRIBUTION_SHARED: Attribution.SHARED,
    common_pb2.REWARD_ATTRIBUTION_INDIVIDUAL: Attribution.INDIVIDUAL,
    common_pb2.REWARD_ATTRIBUTION_MIXED: Attribution.MIXED,
    common_pb2.REWARD_ATTRIBUTION_DIFFERENCE: Attribution.DIFFERENCE,
}
_ATTRIBUTION_PB = {
    v: k for k, v in _ATTRIBUTION.items() if k != common_pb2.REWARD_ATTRIBUTION_UNSPECIFIED
}
_REWARD_MODE = {
    common_pb2.REWARD_MODE_UNSPECIFIED: RewardMode.DENSE,
    common_pb2.REWARD_MODE_DENSE: RewardMode.DENSE,
    common_pb2.REWARD_MODE_SPARSE: RewardMode.SPARSE,
}
_REWARD_MODE_PB = {
    RewardMode.DENSE: common_pb2.REWARD_MODE_DENSE,
    RewardMode.SPARSE: common_pb2.REWARD_MODE_SPARSE,
}
_PHASE_PB = {
    EpisodePhase.RUNNING: common_pb2.EPISODE_PHASE_RUNNING,
    EpisodePhase.TERMINATED: common_pb2.EPISODE_PHASE_TERMINATED,
    EpisodePhase.TRUNCATED: common_pb2.EPISODE_PHASE_TRUNCATED,
}


# -- JSON values and Structs --------------------------------------------------------------------


def struct_to_dict(struct: struct_pb2.Struct, tool: str) -> dict[str, Any]:
    """A tool call's arguments as plain JSON data (whole numbers as int, as schemas expect).

    Raises:
        InvalidToolCallError: a number is NaN or infinite (JSON has neither), naming where as
            every other argument error does (INVALID_ARGUMENTS, field "args.<path>").
    """
    return {key: _plain(value, key, tool) for key, value in struct.fields.items()}


def _plain(value: struct_pb2.Value, path: str, tool: str) -> Any:
    kind = value.WhichOneof("kind")
    if kind == "number_value":
        number = value.number_value
        if not math.isfinite(number):
            raise InvalidToolCallError(
                f"{tool[:64]}: invalid arguments: {path} is {number}: tool arguments are JSON, "
                "which has no NaN or infinities",
                tool[:64],
                ((path, "a finite number"),),
            )
        # Struct carries every number as a double; the tools' schemas want integers for line
        # numbers and replica counts, so a double with no fraction goes back to int.
        return int(number) if number.is_integer() else number
    if kind == "string_value":
        return value.string_value
    if kind == "bool_value":
        return value.bool_value
    if kind == "struct_value":
        return {k: _plain(v, f"{path}.{k}", tool) for k, v in value.struct_value.fields.items()}
    if kind == "list_value":
        return [
            _plain(item, f"{path}[{i}]", tool) for i, item in enumerate(value.list_value.values)
        ]
    return None  # null_value, or a Value with nothing set


def dict_to_struct(data: Mapping[str, Any]) -> struct_pb2.Struct:
    """Plain data as a Struct; values JSON cannot hold become strings.

    Parsed from `struct_wire`'s bytes: one encoder for JSON data, whether it goes out as bytes
    (the hot replies) or inside a message built here.
    """
    return struct_pb2.Struct.FromString(struct_bytes(data))


# -- requests -----------------------------------------------------------------------------------


TURN_TIMEOUT_BOUNDS = (0.1, 3600.0)
"""Seconds a turn or a round may wait, at least and at most (see SessionLimits)."""
MAX_SEED = 2**31 - 1
"""Largest seed a session takes."""
MAX_REQUEST_ID_LENGTH = 128

MAX_VIEW_SERVICES = 256
"""Services a seat's view may name."""
SERVICE_NAME = re.compile(r"[a-z][a-z0-9_-]{0,62}")
"""What a service name looks like (`metasre.simulator.scenarios.spec.ServiceSpec.name`)."""
"""Longest CreateSessionRequest.request_id, in characters."""


def request_id_of(request: control_pb2.CreateSessionRequest) -> str:
    """The request's idempotency id, checked; empty when it has none.

    Raises:
        InvalidRequestError: the id is too long or not printable ASCII, or it comes without an
            owner token of the client's own (a retry proves it is the same caller with it).
    """
    rid = request.request_id
    if not rid:
        return ""
    if not (len(rid) <= MAX_REQUEST_ID_LENGTH and rid.isascii() and rid.isprintable()):
        raise InvalidRequestError(
            f"request_id must be 1-{MAX_REQUEST_ID_LENGTH} printable ASCII characters, got "
            f"{len(rid)} characters {rid[:32]!r}",
            (("request_id", f"1-{MAX_REQUEST_ID_LENGTH} printable ASCII characters"),),
        )
    if not request.owner_token:
        raise InvalidRequestError(
            "request_id needs an owner_token of your own making: the id is scoped to its owner, "
            "and a retry proves it is the same caller by sending the same owner token",
            (("owner_token", "16-256 printable ASCII characters, the same on every retry"),),
        )
    return rid


def request_fingerprint(request: control_pb2.CreateSessionRequest) -> str:
    """SHA-256 of what a CreateSession asks for, apart from its owner token and request id."""
    rest = control_pb2.CreateSessionRequest()
    rest.CopyFrom(request)
    rest.ClearField("owner_token")
    rest.ClearField("request_id")
    return hashlib.sha256(rest.SerializeToString(deterministic=True)).hexdigest()


def check_episode(requested: int, current: int) -> int:
    """The episode a request names (0: the current one).

    Raises:
        InvalidRequestError: no such episode in this session (yet).
    """
    if requested == 0:
        return current
    if not 1 <= requested <= current:
        raise InvalidRequestError(
            f"episode {requested} does not exist: this session has played episodes 1 to"
            f" {current} (0 means the current one)",
            (("episode", f"0, or an episode in [1, {current}]"),),
        )
    return requested


def session_spec(request: control_pb2.CreateSessionRequest, limits: Limits) -> SessionSpec:
    """The SessionSpec a CreateSession asks for.

    Raises:
        InvalidRequestError: an unknown enum value, a bad timeout, a bad seat.
    """
    if not request.scenario_id:
        raise InvalidRequestError(
            "scenario_id is empty; ListScenarios shows the ids",
            (("scenario_id", "a scenario id, e.g. meta-sre/payment-bad-deploy-v2"),),
        )
    policy = _POLICY.get(request.turn_policy)
    if policy is None:
        raise InvalidRequestError(
            f"unknown turn_policy {request.turn_policy}",
            (("turn_policy", "FREE_FOR_ALL, ROUND_ROBIN or SIMULTANEOUS"),),
        )
    attribution = _ATTRIBUTION.get(request.reward_attribution)
    if attribution is None:
        raise InvalidRequestError(
            f"unknown reward_attribution {request.reward_attribution}",
            (("reward_attribution", "SHARED, INDIVIDUAL, MIXED or DIFFERENCE"),),
        )
    reward_mode = _REWARD_MODE.get(request.reward_mode)
    if reward_mode is None:
        raise InvalidRequestError(
            f"unknown reward_mode {request.reward_mode}",
            (("reward_mode", "DENSE or SPARSE"),),
        )
    timeout = request.limits.turn_timeout_seconds or limits.turn_timeout_seconds
    low, high = TURN_TIMEOUT_BOUNDS
    if not (math.isfinite(timeout) and low <= timeout <= high):
        # below the floor a ROUND_ROBIN session logs turn after turn for nothing
        raise InvalidRequestError(
            f"limits.turn_timeout_seconds must be in [{low:g}, {high:g}] seconds, got {timeout}",
            (("limits.turn_timeout_seconds", f"seconds in [{low:g}, {high:g}]"),),
        )
    if not 0 <= request.seed <= MAX_SEED:
        raise InvalidRequestError(
            f"seed must be in [0, {MAX_SEED}], got {request.seed}",
            (("seed", f"an integer in [0, {MAX_SEED}]"),),
        )
    for i, seat in enumerate(request.seats):
        unknown = sorted(set(seat.allowed_tools) - set(TOOLS))
        if unknown:
            raise InvalidRequestError(
                f"seat {i} ({seat.agent_id!r}): allowed_tools names no such tool {unknown};"
                f" the tools are: {', '.join(sorted(TOOLS))}",
                ((f"seats[{i}].allowed_tools", "names from ListTools"),),
            )
    seats = tuple(
        SeatSpec(
            s.agent_id,
            s.role[:64],
            frozenset(s.allowed_tools),
            view_from_pb(s.view, f"seats[{i}].view") if s.HasField("view") else None,
        )
        for i, s in enumerate(request.seats)
    ) or (SeatSpec("agent-1"),)
    alpha = request.team_spirit
    if not math.isfinite(alpha):
        raise InvalidRequestError(
            f"team_spirit must be in [0, 1], got {alpha}", (("team_spirit", "a number in [0, 1]"),)
        )
    return SessionSpec(
        request.scenario_id,
        request.seed,
        seats,
        policy,
        attribution,
        alpha,
        timeout,
        reward_mode,
        request.tell_seats_instance,
    )


# -- simulator and service values to messages ---------------------------------------------------


def phase_pb(phase: EpisodePhase) -> common_pb2.EpisodePhase:
    """The wire enum of a phase."""
    return _PHASE_PB[phase]


def observation_pb(obs: Observation) -> common_pb2.Observation:
    """An Observation message, without the scenario id (see SessionInfo and EpisodeStarted).

    Observations reach every seat, and a seat is told its instance only when its session says
    so; whoever may know it reads it from the session.
    """
    return common_pb2.Observation(
        title=obs.title,
        severity=obs.severity,
        description=obs.description,
        minute=obs.minute,
        sla_minutes_left=obs.sla_minutes_left,
        steps_left=obs.steps_left,
        step_budget=obs.step_budget,
        phase=phase_pb(EpisodePhase(obs.phase)),
        alerts=[
            common_pb2.Alert(
                id=a.id,
                service=a.service,
                severity=a.severity,
                summary=a.summary,
                firing_minutes=a.firing_minutes,
            )
            for a in obs.alerts
        ],
        services=[
            common_pb2.ServiceStatus(
                name=s.name,
                health=s.health,
                error_rate=s.error_rate,
                p99_ms=s.p99_ms,
                cpu=s.cpu,
                memory=s.memory,
                queue_depth=s.queue_depth,
                version=s.version,
                replicas=s.replicas,
                recent_deploy=s.recent_deploy or "",
                depends_on=list(s.depends_on),
            )
            for s in obs.services
        ],
        terminal=list(obs.terminal),
        text=observation_text(obs),
    )


def grade_pb(grade: Grade) -> common_pb2.Grade:
    """A Grade message."""
    return common_pb2.Grade(
        total=grade.total,
        resolved=grade.resolved,
        components=[
            common_pb2.GradeComponent(
                name=c.name, score=c.score, weight=c.weight, detail=c.detail, value=c.value
            )
            for c in grade.components
        ],
        fail_to_pass=dict(grade.fail_to_pass),
        pass_to_pass=dict(grade.pass_to_pass),
        final=grade.final,
    )


def reward_pb(reward: Reward) -> common_pb2.RewardUpdate:
    """A RewardUpdate message."""
    return common_pb2.RewardUpdate(
        agent_id=reward.agent_id,
        tick=reward.tick,
        components=dict(reward.components),
        total=reward.total,
        source_agent_id=reward.source_agent_id,
    )


def applied_pb(event: Applied, *, as_json: bool = False) -> common_pb2.AppliedCall:
    """An AppliedCall message; `as_json`: its data in data_json (StreamOptions.data_as_json)."""
    message = _applied_head(event)
    message.args.CopyFrom(dict_to_struct(event.args))
    if as_json:
        message.data_json = data_json(event)
    else:
        message.data.CopyFrom(dict_to_struct(event.data))
    return message


def tool_result_pb(event: Applied, *, as_json: bool = False) -> agent_pb2.ToolResult:
    """The caller's ToolResult for its applied call; `as_json` as for `applied_pb`."""
    message = _result_head(event)
    if as_json:
        message.data_json = data_json(event)
    else:
        message.data.CopyFrom(dict_to_struct(event.data))
    return message


# Serialized responses for the Connect stream's hot path. Each applied call goes to every seat
# (the caller's result, the teammates' AppliedCall); its data is encoded once, straight to wire
# bytes, and the messages are assembled from serialized parts (a parser reads the fields of
# concatenated parts as one message). A test holds them equal to the messages built above.
_RESPONSE = agent_pb2.ConnectResponse.DESCRIPTOR.fields_by_name
_RESULT_TAG = tag(_RESPONSE["result"].number)
_APPLIED_TAG = tag(_RESPONSE["applied"].number)
_RESULT_FIELDS = agent_pb2.ToolResult.DESCRIPTOR.fields_by_name
# The data's field by its form: False, a Struct (`data_bytes`); True, JSON (`data_json`).
_RESULT_DATA_TAG = {
    False: tag(_RESULT_FIELDS["data"].number),
    True: tag(_RESULT_FIELDS["data_json"].number),
}
_APPLIED_FIELDS = common_pb2.AppliedCall.DESCRIPTOR.fields_by_name
_APPLIED_ARGS_TAG = tag(_APPLIED_FIELDS["args"].number)
_APPLIED_DATA_TAG = {
    False: tag(_APPLIED_FIELDS["data"].number),
    True: tag(_APPLIED_FIELDS["data_json"].number),
}


def data_bytes(event: Applied) -> bytes:
    """The serialized Struct of an applied call's data, to share between its responses."""
    return struct_bytes(event.data)


def data_json(event: Applied) -> bytes:
    """An applied call's data as JSON (ToolResult.data_json), to share between its responses.

    The Struct's data, as `struct_bytes` reads it: keys as strings, a tuple as a list, a set as
    a sorted list, anything else JSON lacks as its str(); numbers keep their form, but orjson
    writes NaN and infinities as null (which no tool's output schema allows anyway).
    """
    try:
        return orjson.dumps(event.data, default=_json_default, option=orjson.OPT_NON_STR_KEYS)
    except orjson.JSONEncodeError:
        # What orjson refuses (integers past 64 bits, a lone surrogate) the json module still
        # writes: NaN and infinities as null, as orjson would, and a surrogate as "?", as the
        # Struct's encoder does.
        text = json.dumps(
            _finite(event.data), default=_json_default, separators=(",", ":"), ensure_ascii=False
        )
        return text.encode("utf-8", "replace")


def _json_default(value: Any) -> Any:
    # What orjson does not write itself: a Mapping that is not a dict, a set, anything else.
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, set | frozenset):
        return sorted(value, key=str)
    return str(value)


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def result_response_bytes(event: Applied, sequence: int, data: bytes, *, as_json: bool) -> bytes:
    """The serialized ConnectResponse carrying the caller's ToolResult.

    `data` from `data_bytes`, or from `data_json` when `as_json` (sent in data_json).
    """
    head = agent_pb2.ConnectResponse(call_id=event.call_id, sequence=sequence).SerializeToString()
    body = (
        _result_head(event).SerializeToString(),
        *delimited_parts(_RESULT_DATA_TAG[as_json], (data,)),
    )
    return b"".join((head, *delimited_parts(_RESULT_TAG, body)))


def applied_response_bytes(event: Applied, sequence: int, data: bytes, *, as_json: bool) -> bytes:
    """The serialized ConnectResponse telling teammates of an applied call (`data` as above)."""
    head = agent_pb2.ConnectResponse(sequence=sequence).SerializeToString()
    body = (
        _applied_head(event).SerializeToString(),
        *delimited_parts(_APPLIED_ARGS_TAG, (struct_bytes(event.args),)),
        *delimited_parts(_APPLIED_DATA_TAG[as_json], (data,)),
    )
    return b"".join((head, *delimited_parts(_APPLIED_TAG, body)))


def teammate_call_response_bytes(event: TeammateCall, sequence: int) -> bytes:
    """The serialized ConnectResponse telling a restricted seat of a teammate's call."""
    head = agent_pb2.ConnectResponse(sequence=sequence).SerializeToString()
    # Every field the projection kept, and only those: what a seat learns is decided there.
    applied = common_pb2.AppliedCall(**dataclasses.asdict(event))
    return head + delimited(_APPLIED_TAG, applied.SerializeToString())


_BATCH_TAG = tag(_RESPONSE["batch"].number)
_BATCH_EVENT_TAG = tag(agent_pb2.EventBatch.DESCRIPTOR.fields_by_name["events"].number)


def batch_response_bytes(events: Sequence[bytes], sequence: int) -> bytes:
    """The serialized ConnectResponse carrying serialized ConnectResponses as one EventBatch.

    `sequence` is the last event's. Assembled from the parts' bytes, so the shared views of
    applied calls are not parsed or built again per stream.
    """
    body: list[bytes] = []
    for event in events:
        body += (_BATCH_EVENT_TAG, varint(len(event)), event)
    head = agent_pb2.ConnectResponse(sequence=sequence).SerializeToString()
    return b"".join((head, *delimited_parts(_BATCH_TAG, body)))


def _applied_head(event: Applied) -> common_pb2.AppliedCall:
    # Everything but the Structs, which the callers add as messages or as bytes.
    return common_pb2.AppliedCall(
        tick=event.tick,
        agent_id=event.agent_id,
        call_id=event.call_id,
        tool=event.tool,
        ok=event.ok,
        error_code=event.error_code,
        text=event.text,
        minutes=event.minutes,
        clock=event.clock,
        round=event.round,
    )


def _result_head(event: Applied) -> agent_pb2.ToolResult:
    return agent_pb2.ToolResult(
        call_id=event.call_id,
        tick=event.tick,
        ok=event.ok,
        error_code=event.error_code,
        text=event.text,
        observation=observation_pb(event.observation),
        reward=reward_pb(event.reward) if event.reward is not None else None,
        phase=phase_pb(event.phase),
    )


# Each new session sends its opening twice (EpisodeStarted, and Joined when the agent joins
# before the first call): its message is serialized once for every episode of its scenario and
# seed, kept for the 64 most recently used.
_SHARED_OBSERVATIONS: OpeningForms[bytes] = OpeningForms(
    64, lambda o: observation_pb(o).SerializeToString()
)
_STARTED_TAG = tag(_RESPONSE["episode_start"].number)
_STARTED_OBSERVATION_TAG = tag(
    common_pb2.EpisodeStarted.DESCRIPTOR.fields_by_name["observation"].number
)
_JOINED_TAG = tag(_RESPONSE["joined"].number)
_JOINED_OBSERVATION_TAG = tag(agent_pb2.Joined.DESCRIPTOR.fields_by_name["observation"].number)


def shared_observation_bytes(obs: Observation) -> bytes:
    """`observation_pb(obs)` serialized, for `obs` an opening (see `OpeningForms`)."""
    return _SHARED_OBSERVATIONS.get(obs)


def started_response_bytes(event: Started, sequence: int) -> bytes:
    """The serialized ConnectResponse announcing an episode (`started_pb`, at `sequence`)."""
    head = agent_pb2.ConnectResponse(sequence=sequence).SerializeToString()
    body = common_pb2.EpisodeStarted(episode=event.episode, seed=event.seed).SerializeToString()
    body += delimited(_STARTED_OBSERVATION_TAG, shared_observation_bytes(event.observation))
    return head + delimited(_STARTED_TAG, body)


def joined_response_bytes(joined: agent_pb2.Joined, observation: bytes) -> bytes:
    """The serialized ConnectResponse of a join: `joined` with the serialized `observation`."""
    body = joined.SerializeToString() + delimited(_JOINED_OBSERVATION_TAG, observation)
    return delimited(_JOINED_TAG, body)


def ended_pb(event: Ended) -> common_pb2.EpisodeEnded:
    """An EpisodeEnded message."""
    return common_pb2.EpisodeEnded(
        tick=event.tick,
        phase=phase_pb(event.phase),
        grade=grade_pb(event.grade),
        agent_rewards=dict(event.agent_rewards),
    )


def started_pb(event: Started) -> common_pb2.EpisodeStarted:
    """An EpisodeStarted message."""
    return common_pb2.EpisodeStarted(
        episode=event.episode, seed=event.seed, observation=observation_pb(event.observation)
    )


def turn_pb(event: Turn) -> common_pb2.TurnGranted:
    """A TurnGranted message."""
    return common_pb2.TurnGranted(
        tick=event.tick,
        agent_id=event.agent_id,
        round=event.round,
        timeout_seconds=event.timeout_seconds,
    )


def message_pb(event: Message) -> common_pb2.TeamMessage:
    """A TeamMessage message."""
    return common_pb2.TeamMessage(
        tick=event.tick, from_agent_id=event.sender, to=list(event.to), text=event.text
    )


def event_pb(entry: LogEntry) -> common_pb2.SessionEvent:
    """A log entry as a SessionEvent."""
    out = common_pb2.SessionEvent(sequence=entry.sequence, episode=entry.episode, tick=entry.tick)
    event = entry.event
    if isinstance(event, Applied):
        out.applied.CopyFrom(applied_pb(event))
    elif isinstance(event, Reward):
        out.reward.CopyFrom(reward_pb(event))
    elif isinstance(event, Message):
        out.message.CopyFrom(message_pb(event))
    elif isinstance(event, Turn):
        out.turn.CopyFrom(turn_pb(event))
    elif isinstance(event, Started):
        out.started.CopyFrom(started_pb(event))
    else:
        out.ended.CopyFrom(ended_pb(event))
    return out


def session_pb(session: Session, *, seat: SeatProjection | None = None) -> common_pb2.SessionInfo:
    """A SessionInfo message for the owner, or as `seat` is told it.

    A seat is not told the instance unless its session says so, and sees its teammates' views
    as its own view shows them.
    """
    spec = session.spec
    told = seat is None or seat.told

    def view_of(other: Seat) -> tuple[View, bool]:
        return (session.view_of(other), False) if seat is None else seat.seat_view(other)

    views = [view_of(s) for s in session.seats]
    return common_pb2.SessionInfo(
        session_id=session.id,
        scenario_id=spec.scenario_id if told else "",
        seed=session.seed if told else 0,
        tell_seats_instance=spec.tell_seats_instance,
        seats=[
            common_pb2.Seat(
                agent_id=s.agent_id,
                role=s.spec.role,
                allowed_tools=sorted(s.spec.allowed_tools),
                connected=s.holder is not None,
                reward_total=s.reward_total,
                view=view_pb(view),
                view_services_cut=cut,
            )
            for s, (view, cut) in zip(session.seats, views, strict=True)
        ],
        turn_policy=_POLICY_PB[spec.policy],
        reward_attribution=_ATTRIBUTION_PB[spec.attribution],
        team_spirit=spec.team_spirit,
        phase=phase_pb(session.episode.phase),
        tick=session.episode.tick,
        episode=session.episode_no,
        closed=session.closed,
        turn_agent_id=session.turn_agent_id if spec.policy is TurnPolicy.ROUND_ROBIN else "",
        limits=common_pb2.SessionLimits(turn_timeout_seconds=spec.turn_timeout_seconds),
        reward_mode=_REWARD_MODE_PB[spec.reward_mode],
    )


def attribution_pb(attribution: Attribution) -> common_pb2.RewardAttribution:
    """The wire enum of an attribution mode."""
    return _ATTRIBUTION_PB[attribution]


def tool_pb(tool: Tool) -> common_pb2.ToolSpec:
    """A ToolSpec message: the tool's `served` entry, its schemas as Structs."""
    entry = tool.served()
    for schema in ("input_schema", "output_schema", "error_schema"):
        entry[schema] = dict_to_struct(entry[schema])
    return common_pb2.ToolSpec(**entry)


def scenario_pb(entry: ScenarioEntry) -> common_pb2.ScenarioSummary:
    """A ScenarioSummary message (the family's spec for seed 0, without its code tree)."""
    spec = entry.spec(0)
    return common_pb2.ScenarioSummary(
        id=entry.id,
        title=spec.title,
        severity=spec.severity,
        difficulty=spec.difficulty,
        sla_minutes=spec.sla_minutes,
        step_budget=spec.step_budget,
        roles=[
            common_pb2.RoleInfo(
                name=r.name, description=r.description, tools=list(r.tools), view=view_pb(r.view)
            )
            for r in spec.roles
        ],
        part_of=entry.part_of or "",
    )


def view_pb(view: View) -> common_pb2.View:
    """A View message (the full view is the empty message)."""
    return common_pb2.View(
        services=list(view.services or ()),
        hide_code=not view.code,
        hide_data=not view.data,
        hide_deploys=not view.deploys,
    )


def view_from_pb(message: common_pb2.View, where: str) -> View:
    """The View a message asks for.

    Raises:
        InvalidRequestError: a service name is not a plausible service name.
    """
    services = list(message.services)
    if len(services) > MAX_VIEW_SERVICES:
        raise InvalidRequestError(
            f"{where}.services names {len(services)} services; at most {MAX_VIEW_SERVICES}",
            ((f"{where}.services", f"at most {MAX_VIEW_SERVICES} service names"),),
        )
    for name in services:
        if not SERVICE_NAME.fullmatch(name):
            raise InvalidRequestError(
                f"{where}.services: {name[:64]!r} is not a service name (lowercase letters,"
                " digits, '_' and '-', starting with a letter, at most 63 characters)",
                ((f"{where}.services", "service names from the scenario"),),
            )
    return View(
        services=tuple(dict.fromkeys(services)) or None,
        code=not message.hide_code,
        data=not message.hide_data,
        deploys=not message.hide_deploys,
    )


def limits_pb(limits: Limits) -> control_pb2.ServerLimits:
    """A ServerLimits message."""
    return control_pb2.ServerLimits(
        max_sessions=limits.max_sessions,
        max_sessions_per_owner=limits.max_sessions_per_owner,
        ended_session_seconds=limits.ended_session_seconds,
        max_agents_per_session=limits.max_agents_per_session,
        max_message_bytes=limits.max_message_bytes,
        idle_session_seconds=limits.idle_session_seconds,
        idle_seat_seconds=limits.idle_seat_seconds,
        turn_timeout_seconds=limits.turn_timeout_seconds,
        seat_grace_seconds=limits.seat_grace_seconds,
        max_request_id_length=MAX_REQUEST_ID_LENGTH,
        stream_buffer_messages=limits.stream_buffer_messages,
        stream_buffer_bytes=limits.stream_buffer_bytes,
        slow_reader_seconds=limits.slow_reader_seconds,
    )
