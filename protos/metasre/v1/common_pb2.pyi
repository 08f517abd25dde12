from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class TurnPolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TURN_POLICY_UNSPECIFIED: _ClassVar[TurnPolicy]
    TURN_POLICY_FREE_FOR_ALL: _ClassVar[TurnPolicy]
    TURN_POLICY_ROUND_ROBIN: _ClassVar[TurnPolicy]
    TURN_POLICY_SIMULTANEOUS: _ClassVar[TurnPolicy]

class RewardMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    REWARD_MODE_UNSPECIFIED: _ClassVar[RewardMode]
    REWARD_MODE_DENSE: _ClassVar[RewardMode]
    REWARD_MODE_SPARSE: _ClassVar[RewardMode]

class RewardAttribution(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    REWARD_ATTRIBUTION_UNSPECIFIED: _ClassVar[RewardAttribution]
    REWARD_ATTRIBUTION_SHARED: _ClassVar[RewardAttribution]
    REWARD_ATTRIBUTION_INDIVIDUAL: _ClassVar[RewardAttribution]
    REWARD_ATTRIBUTION_MIXED: _ClassVar[RewardAttribution]
    REWARD_ATTRIBUTION_DIFFERENCE: _ClassVar[RewardAttribution]

class EpisodePhase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EPISODE_PHASE_UNSPECIFIED: _ClassVar[EpisodePhase]
    EPISODE_PHASE_RUNNING: _ClassVar[EpisodePhase]
    EPISODE_PHASE_TERMINATED: _ClassVar[EpisodePhase]
    EPISODE_PHASE_TRUNCATED: _ClassVar[EpisodePhase]
TURN_POLICY_UNSPECIFIED: TurnPolicy
TURN_POLICY_FREE_FOR_ALL: TurnPolicy
TURN_POLICY_ROUND_ROBIN: TurnPolicy
TURN_POLICY_SIMULTANEOUS: TurnPolicy
REWARD_MODE_UNSPECIFIED: RewardMode
REWARD_MODE_DENSE: RewardMode
REWARD_MODE_SPARSE: RewardMode
REWARD_ATTRIBUTION_UNSPECIFIED: RewardAttribution
REWARD_ATTRIBUTION_SHARED: RewardAttribution
REWARD_ATTRIBUTION_INDIVIDUAL: RewardAttribution
REWARD_ATTRIBUTION_MIXED: RewardAttribution
REWARD_ATTRIBUTION_DIFFERENCE: RewardAttribution
EPISODE_PHASE_UNSPECIFIED: EpisodePhase
EPISODE_PHASE_RUNNING: EpisodePhase
EPISODE_PHASE_TERMINATED: EpisodePhase
EPISODE_PHASE_TRUNCATED: EpisodePhase

class View(_message.Message):
    __slots__ = ("services", "hide_code", "hide_data", "hide_deploys")
    SERVICES_FIELD_NUMBER: _ClassVar[int]
    HIDE_CODE_FIELD_NUMBER: _ClassVar[int]
    HIDE_DATA_FIELD_NUMBER: _ClassVar[int]
    HIDE_DEPLOYS_FIELD_NUMBER: _ClassVar[int]
    services: _containers.RepeatedScalarFieldContainer[str]
    hide_code: bool
    hide_data: bool
    hide_deploys: bool
    def __init__(self, services: _Optional[_Iterable[str]] = ..., hide_code: _Optional[bool] = ..., hide_data: _Optional[bool] = ..., hide_deploys: _Optional[bool] = ...) -> None: ...

class RoleInfo(_message.Message):
    __slots__ = ("name", "description", "tools", "view")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    tools: _containers.RepeatedScalarFieldContainer[str]
    view: View
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., tools: _Optional[_Iterable[str]] = ..., view: _Optional[_Union[View, _Mapping]] = ...) -> None: ...

class SeatConfig(_message.Message):
    __slots__ = ("agent_id", "role", "allowed_tools", "view")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_TOOLS_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    role: str
    allowed_tools: _containers.RepeatedScalarFieldContainer[str]
    view: View
    def __init__(self, agent_id: _Optional[str] = ..., role: _Optional[str] = ..., allowed_tools: _Optional[_Iterable[str]] = ..., view: _Optional[_Union[View, _Mapping]] = ...) -> None: ...

class Seat(_message.Message):
    __slots__ = ("agent_id", "role", "allowed_tools", "connected", "reward_total", "view", "view_services_cut")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_TOOLS_FIELD_NUMBER: _ClassVar[int]
    CONNECTED_FIELD_NUMBER: _ClassVar[int]
    REWARD_TOTAL_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    VIEW_SERVICES_CUT_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    role: str
    allowed_tools: _containers.RepeatedScalarFieldContainer[str]
    connected: bool
    reward_total: float
    view: View
    view_services_cut: bool
    def __init__(self, agent_id: _Optional[str] = ..., role: _Optional[str] = ..., allowed_tools: _Optional[_Iterable[str]] = ..., connected: _Optional[bool] = ..., reward_total: _Optional[float] = ..., view: _Optional[_Union[View, _Mapping]] = ..., view_services_cut: _Optional[bool] = ...) -> None: ...

class SessionLimits(_message.Message):
    __slots__ = ("turn_timeout_seconds",)
    TURN_TIMEOUT_SECONDS_FIELD_NUMBER: _ClassVar[int]
    turn_timeout_seconds: float
    def __init__(self, turn_timeout_seconds: _Optional[float] = ...) -> None: ...

class SessionInfo(_message.Message):
    __slots__ = ("session_id", "scenario_id", "seed", "seats", "turn_policy", "reward_attribution", "team_spirit", "phase", "tick", "episode", "closed", "turn_agent_id", "limits", "reward_mode", "tell_seats_instance", "endpoint")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SCENARIO_ID_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    TURN_POLICY_FIELD_NUMBER: _ClassVar[int]
    REWARD_ATTRIBUTION_FIELD_NUMBER: _ClassVar[int]
    TEAM_SPIRIT_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    TICK_FIELD_NUMBER: _ClassVar[int]
    EPISODE_FIELD_NUMBER: _ClassVar[int]
    CLOSED_FIELD_NUMBER: _ClassVar[int]
    TURN_AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    REWARD_MODE_FIELD_NUMBER: _ClassVar[int]
    TELL_SEATS_INSTANCE_FIELD_NUMBER: _ClassVar[int]
    ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    scenario_id: str
    seed: int
    seats: _containers.RepeatedCompositeFieldContainer[Seat]
    turn_policy: TurnPolicy
    reward_attribution: RewardAttribution
    team_spirit: float
    phase: EpisodePhase
    tick: int
    episode: int
    closed: bool
    turn_agent_id: str
    limits: SessionLimits
    reward_mode: RewardMode
    tell_seats_instance: bool
    endpoint: str
    def __init__(self, session_id: _Optional[str] = ..., scenario_id: _Optional[str] = ..., seed: _Optional[int] = ..., seats: _Optional[_Iterable[_Union[Seat, _Mapping]]] = ..., turn_policy: _Optional[_Union[TurnPolicy, str]] = ..., reward_attribution: _Optional[_Union[RewardAttribution, str]] = ..., team_spirit: _Optional[float] = ..., phase: _Optional[_Union[EpisodePhase, str]] = ..., tick: _Optional[int] = ..., episode: _Optional[int] = ..., closed: _Optional[bool] = ..., turn_agent_id: _Optional[str] = ..., limits: _Optional[_Union[SessionLimits, _Mapping]] = ..., reward_mode: _Optional[_Union[RewardMode, str]] = ..., tell_seats_instance: _Optional[bool] = ..., endpoint: _Optional[str] = ...) -> None: ...

class Alert(_message.Message):
    __slots__ = ("id", "service", "severity", "summary", "firing_minutes")
    ID_FIELD_NUMBER: _ClassVar[int]
    SERVICE_FIELD_NUMBER: _ClassVar[int]
    SEVERITY_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    FIRING_MINUTES_FIELD_NUMBER: _ClassVar[int]
    id: str
    service: str
    severity: str
    summary: str
    firing_minutes: int
    def __init__(self, id: _Optional[str] = ..., service: _Optional[str] = ..., severity: _Optional[str] = ..., summary: _Optional[str] = ..., firing_minutes: _Optional[int] = ...) -> None: ...

class ServiceStatus(_message.Message):
    __slots__ = ("name", "health", "error_rate", "p99_ms", "cpu", "memory", "queue_depth", "version", "replicas", "recent_deploy", "depends_on")
    NAME_FIELD_NUMBER: _ClassVar[int]
    HEALTH_FIELD_NUMBER: _ClassVar[int]
    ERROR_RATE_FIELD_NUMBER: _ClassVar[int]
    P99_MS_FIELD_NUMBER: _ClassVar[int]
    CPU_FIELD_NUMBER: _ClassVar[int]
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    QUEUE_DEPTH_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    REPLICAS_FIELD_NUMBER: _ClassVar[int]
    RECENT_DEPLOY_FIELD_NUMBER: _ClassVar[int]
    DEPENDS_ON_FIELD_NUMBER: _ClassVar[int]
    name: str
    health: str
    error_rate: float
    p99_ms: float
    cpu: float
    memory: float
    queue_depth: float
    version: str
    replicas: int
    recent_deploy: str
    depends_on: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, name: _Optional[str] = ..., health: _Optional[str] = ..., error_rate: _Optional[float] = ..., p99_ms: _Optional[float] = ..., cpu: _Optional[float] = ..., memory: _Optional[float] = ..., queue_depth: _Optional[float] = ..., version: _Optional[str] = ..., replicas: _Optional[int] = ..., recent_deploy: _Optional[str] = ..., depends_on: _Optional[_Iterable[str]] = ...) -> None: ...

class Observation(_message.Message):
    __slots__ = ("scenario_id", "title", "severity", "description", "minute", "sla_minutes_left", "steps_left", "step_budget", "phase", "alerts", "services", "terminal", "text")
    SCENARIO_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    SEVERITY_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    MINUTE_FIELD_NUMBER: _ClassVar[int]
    SLA_MINUTES_LEFT_FIELD_NUMBER: _ClassVar[int]
    STEPS_LEFT_FIELD_NUMBER: _ClassVar[int]
    STEP_BUDGET_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    ALERTS_FIELD_NUMBER: _ClassVar[int]
    SERVICES_FIELD_NUMBER: _ClassVar[int]
    TERMINAL_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    scenario_id: str
    title: str
    severity: str
    description: str
    minute: float
    sla_minutes_left: float
    steps_left: int
    step_budget: int
    phase: EpisodePhase
    alerts: _containers.RepeatedCompositeFieldContainer[Alert]
    services: _containers.RepeatedCompositeFieldContainer[ServiceStatus]
    terminal: _containers.RepeatedScalarFieldContainer[str]
    text: str
    def __init__(self, scenario_id: _Optional[str] = ..., title: _Optional[str] = ..., severity: _Optional[str] = ..., description: _Optional[str] = ..., minute: _Optional[float] = ..., sla_minutes_left: _Optional[float] = ..., steps_left: _Optional[int] = ..., step_budget: _Optional[int] = ..., phase: _Optional[_Union[EpisodePhase, str]] = ..., alerts: _Optional[_Iterable[_Union[Alert, _Mapping]]] = ..., services: _Optional[_Iterable[_Union[ServiceStatus, _Mapping]]] = ..., terminal: _Optional[_Iterable[str]] = ..., text: _Optional[str] = ...) -> None: ...

class GradeComponent(_message.Message):
    __slots__ = ("name", "score", "weight", "detail", "value")
    NAME_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    name: str
    score: float
    weight: float
    detail: str
    value: float
    def __init__(self, name: _Optional[str] = ..., score: _Optional[float] = ..., weight: _Optional[float] = ..., detail: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...

class Grade(_message.Message):
    __slots__ = ("total", "resolved", "components", "fail_to_pass", "pass_to_pass", "final")
    class FailToPassEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: bool
        def __init__(self, key: _Optional[str] = ..., value: _Optional[bool] = ...) -> None: ...
    class PassToPassEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: bool
        def __init__(self, key: _Optional[str] = ..., value: _Optional[bool] = ...) -> None: ...
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    RESOLVED_FIELD_NUMBER: _ClassVar[int]
    COMPONENTS_FIELD_NUMBER: _ClassVar[int]
    FAIL_TO_PASS_FIELD_NUMBER: _ClassVar[int]
    PASS_TO_PASS_FIELD_NUMBER: _ClassVar[int]
    FINAL_FIELD_NUMBER: _ClassVar[int]
    total: float
    resolved: bool
    components: _containers.RepeatedCompositeFieldContainer[GradeComponent]
    fail_to_pass: _containers.ScalarMap[str, bool]
    pass_to_pass: _containers.ScalarMap[str, bool]
    final: bool
    def __init__(self, total: _Optional[float] = ..., resolved: _Optional[bool] = ..., components: _Optional[_Iterable[_Union[GradeComponent, _Mapping]]] = ..., fail_to_pass: _Optional[_Mapping[str, bool]] = ..., pass_to_pass: _Optional[_Mapping[str, bool]] = ..., final: _Optional[bool] = ...) -> None: ...

class RewardUpdate(_message.Message):
    __slots__ = ("agent_id", "tick", "components", "total", "source_agent_id")
    class ComponentsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    TICK_FIELD_NUMBER: _ClassVar[int]
    COMPONENTS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    SOURCE_AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    tick: int
    components: _containers.ScalarMap[str, float]
    total: float
    source_agent_id: str
    def __init__(self, agent_id: _Optional[str] = ..., tick: _Optional[int] = ..., components: _Optional[_Mapping[str, float]] = ..., total: _Optional[float] = ..., source_agent_id: _Optional[str] = ...) -> None: ...

class AppliedCall(_message.Message):
    __slots__ = ("tick", "agent_id", "call_id", "tool", "args", "ok", "error_code", "text", "data", "minutes", "clock", "round", "data_json")
    TICK_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    OK_FIELD_NUMBER: _ClassVar[int]
    ERROR_CODE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    MINUTES_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    DATA_JSON_FIELD_NUMBER: _ClassVar[int]
    tick: int
    agent_id: str
    call_id: str
    tool: str
    args: _struct_pb2.Struct
    ok: bool
    error_code: str
    text: str
    data: _struct_pb2.Struct
    minutes: float
    clock: float
    round: int
    data_json: bytes
    def __init__(self, tick: _Optional[int] = ..., agent_id: _Optional[str] = ..., call_id: _Optional[str] = ..., tool: _Optional[str] = ..., args: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., ok: _Optional[bool] = ..., error_code: _Optional[str] = ..., text: _Optional[str] = ..., data: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., minutes: _Optional[float] = ..., clock: _Optional[float] = ..., round: _Optional[int] = ..., data_json: _Optional[bytes] = ...) -> None: ...

class TeamMessage(_message.Message):
    __slots__ = ("tick", "from_agent_id", "to", "text")
    TICK_FIELD_NUMBER: _ClassVar[int]
    FROM_AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    tick: int
    from_agent_id: str
    to: _containers.RepeatedScalarFieldContainer[str]
    text: str
    def __init__(self, tick: _Optional[int] = ..., from_agent_id: _Optional[str] = ..., to: _Optional[_Iterable[str]] = ..., text: _Optional[str] = ...) -> None: ...

class TurnGranted(_message.Message):
    __slots__ = ("tick", "agent_id", "round", "timeout_seconds")
    TICK_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_SECONDS_FIELD_NUMBER: _ClassVar[int]
    tick: int
    agent_id: str
    round: int
    timeout_seconds: float
    def __init__(self, tick: _Optional[int] = ..., agent_id: _Optional[str] = ..., round: _Optional[int] = ..., timeout_seconds: _Optional[float] = ...) -> None: ...

class EpisodeStarted(_message.Message):
    __slots__ = ("episode", "seed", "observation")
    EPISODE_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    episode: int
    seed: int
    observation: Observation
    def __init__(self, episode: _Optional[int] = ..., seed: _Optional[int] = ..., observation: _Optional[_Union[Observation, _Mapping]] = ...) -> None: ...

class EpisodeEnded(_message.Message):
    __slots__ = ("tick", "phase", "grade", "agent_rewards")
    class AgentRewardsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    TICK_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    GRADE_FIELD_NUMBER: _ClassVar[int]
    AGENT_REWARDS_FIELD_NUMBER: _ClassVar[int]
    tick: int
    phase: EpisodePhase
    grade: Grade
    agent_rewards: _containers.ScalarMap[str, float]
    def __init__(self, tick: _Optional[int] = ..., phase: _Optional[_Union[EpisodePhase, str]] = ..., grade: _Optional[_Union[Grade, _Mapping]] = ..., agent_rewards: _Optional[_Mapping[str, float]] = ...) -> None: ...

class SessionEvent(_message.Message):
    __slots__ = ("sequence", "episode", "tick", "applied", "reward", "message", "turn", "started", "ended")
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    EPISODE_FIELD_NUMBER: _ClassVar[int]
    TICK_FIELD_NUMBER: _ClassVar[int]
    APPLIED_FIELD_NUMBER: _ClassVar[int]
    REWARD_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    STARTED_FIELD_NUMBER: _ClassVar[int]
    ENDED_FIELD_NUMBER: _ClassVar[int]
    sequence: int
    episode: int
    tick: int
    applied: AppliedCall
    reward: RewardUpdate
    message: TeamMessage
    turn: TurnGranted
    started: EpisodeStarted
    ended: EpisodeEnded
    def __init__(self, sequence: _Optional[int] = ..., episode: _Optional[int] = ..., tick: _Optional[int] = ..., applied: _Optional[_Union[AppliedCall, _Mapping]] = ..., reward: _Optional[_Union[RewardUpdate, _Mapping]] = ..., message: _Optional[_Union[TeamMessage, _Mapping]] = ..., turn: _Optional[_Union[TurnGranted, _Mapping]] = ..., started: _Optional[_Union[EpisodeStarted, _Mapping]] = ..., ended: _Optional[_Union[EpisodeEnded, _Mapping]] = ...) -> None: ...

class ScenarioSummary(_message.Message):
    __slots__ = ("id", "title", "severity", "difficulty", "sla_minutes", "step_budget", "roles", "part_of")
    ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    SEVERITY_FIELD_NUMBER: _ClassVar[int]
    DIFFICULTY_FIELD_NUMBER: _ClassVar[int]
    SLA_MINUTES_FIELD_NUMBER: _ClassVar[int]
    STEP_BUDGET_FIELD_NUMBER: _ClassVar[int]
    ROLES_FIELD_NUMBER: _ClassVar[int]
    PART_OF_FIELD_NUMBER: _ClassVar[int]
    id: str
    title: str
    severity: str
    difficulty: str
    sla_minutes: float
    step_budget: int
    roles: _containers.RepeatedCompositeFieldContainer[RoleInfo]
    part_of: str
    def __init__(self, id: _Optional[str] = ..., title: _Optional[str] = ..., severity: _Optional[str] = ..., difficulty: _Optional[str] = ..., sla_minutes: _Optional[float] = ..., step_budget: _Optional[int] = ..., roles: _Optional[_Iterable[_Union[RoleInfo, _Mapping]]] = ..., part_of: _Optional[str] = ...) -> None: ...

class ToolSpec(_message.Message):
    __slots__ = ("name", "description", "input_schema", "kind", "minutes", "needs", "service_args", "gives_hints", "output_schema", "error_schema")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    INPUT_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    MINUTES_FIELD_NUMBER: _ClassVar[int]
    NEEDS_FIELD_NUMBER: _ClassVar[int]
    SERVICE_ARGS_FIELD_NUMBER: _ClassVar[int]
    GIVES_HINTS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    ERROR_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    input_schema: _struct_pb2.Struct
    kind: str
    minutes: float
    needs: _containers.RepeatedScalarFieldContainer[str]
    service_args: _containers.RepeatedScalarFieldContainer[str]
    gives_hints: bool
    output_schema: _struct_pb2.Struct
    error_schema: _struct_pb2.Struct
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., input_schema: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., kind: _Optional[str] = ..., minutes: _Optional[float] = ..., needs: _Optional[_Iterable[str]] = ..., service_args: _Optional[_Iterable[str]] = ..., gives_hints: _Optional[bool] = ..., output_schema: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., error_schema: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...
