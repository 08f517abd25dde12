from metasre.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ServerLimits(_message.Message):
    __slots__ = ("max_sessions", "max_agents_per_session", "max_message_bytes", "idle_session_seconds", "idle_seat_seconds", "turn_timeout_seconds", "seat_grace_seconds", "max_request_id_length", "stream_buffer_messages", "slow_reader_seconds", "stream_buffer_bytes", "max_sessions_per_owner", "ended_session_seconds")
    MAX_SESSIONS_FIELD_NUMBER: _ClassVar[int]
    MAX_AGENTS_PER_SESSION_FIELD_NUMBER: _ClassVar[int]
    MAX_MESSAGE_BYTES_FIELD_NUMBER: _ClassVar[int]
    IDLE_SESSION_SECONDS_FIELD_NUMBER: _ClassVar[int]
    IDLE_SEAT_SECONDS_FIELD_NUMBER: _ClassVar[int]
    TURN_TIMEOUT_SECONDS_FIELD_NUMBER: _ClassVar[int]
    SEAT_GRACE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    MAX_REQUEST_ID_LENGTH_FIELD_NUMBER: _ClassVar[int]
    STREAM_BUFFER_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    SLOW_READER_SECONDS_FIELD_NUMBER: _ClassVar[int]
    STREAM_BUFFER_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_SESSIONS_PER_OWNER_FIELD_NUMBER: _ClassVar[int]
    ENDED_SESSION_SECONDS_FIELD_NUMBER: _ClassVar[int]
    max_sessions: int
    max_agents_per_session: int
    max_message_bytes: int
    idle_session_seconds: float
    idle_seat_seconds: float
    turn_timeout_seconds: float
    seat_grace_seconds: float
    max_request_id_length: int
    stream_buffer_messages: int
    slow_reader_seconds: float
    stream_buffer_bytes: int
    max_sessions_per_owner: int
    ended_session_seconds: float
    def __init__(self, max_sessions: _Optional[int] = ..., max_agents_per_session: _Optional[int] = ..., max_message_bytes: _Optional[int] = ..., idle_session_seconds: _Optional[float] = ..., idle_seat_seconds: _Optional[float] = ..., turn_timeout_seconds: _Optional[float] = ..., seat_grace_seconds: _Optional[float] = ..., max_request_id_length: _Optional[int] = ..., stream_buffer_messages: _Optional[int] = ..., slow_reader_seconds: _Optional[float] = ..., stream_buffer_bytes: _Optional[int] = ..., max_sessions_per_owner: _Optional[int] = ..., ended_session_seconds: _Optional[float] = ...) -> None: ...

class GetServerInfoRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetServerInfoResponse(_message.Message):
    __slots__ = ("protocol_version", "server_version", "capabilities", "limits", "sandbox", "load", "shards")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    SERVER_VERSION_FIELD_NUMBER: _ClassVar[int]
    CAPABILITIES_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    SANDBOX_FIELD_NUMBER: _ClassVar[int]
    LOAD_FIELD_NUMBER: _ClassVar[int]
    SHARDS_FIELD_NUMBER: _ClassVar[int]
    protocol_version: str
    server_version: str
    capabilities: _containers.RepeatedScalarFieldContainer[str]
    limits: ServerLimits
    sandbox: SandboxIsolation
    load: ServerLoad
    shards: _containers.RepeatedCompositeFieldContainer[ShardInfo]
    def __init__(self, protocol_version: _Optional[str] = ..., server_version: _Optional[str] = ..., capabilities: _Optional[_Iterable[str]] = ..., limits: _Optional[_Union[ServerLimits, _Mapping]] = ..., sandbox: _Optional[_Union[SandboxIsolation, _Mapping]] = ..., load: _Optional[_Union[ServerLoad, _Mapping]] = ..., shards: _Optional[_Iterable[_Union[ShardInfo, _Mapping]]] = ...) -> None: ...

class ServerLoad(_message.Message):
    __slots__ = ("open_sessions", "closed_sessions", "refused_sessions", "store_commits", "store_problem")
    OPEN_SESSIONS_FIELD_NUMBER: _ClassVar[int]
    CLOSED_SESSIONS_FIELD_NUMBER: _ClassVar[int]
    REFUSED_SESSIONS_FIELD_NUMBER: _ClassVar[int]
    STORE_COMMITS_FIELD_NUMBER: _ClassVar[int]
    STORE_PROBLEM_FIELD_NUMBER: _ClassVar[int]
    open_sessions: int
    closed_sessions: int
    refused_sessions: int
    store_commits: int
    store_problem: str
    def __init__(self, open_sessions: _Optional[int] = ..., closed_sessions: _Optional[int] = ..., refused_sessions: _Optional[int] = ..., store_commits: _Optional[int] = ..., store_problem: _Optional[str] = ...) -> None: ...

class ShardInfo(_message.Message):
    __slots__ = ("slot", "endpoint", "serving", "load", "restarts")
    SLOT_FIELD_NUMBER: _ClassVar[int]
    ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    SERVING_FIELD_NUMBER: _ClassVar[int]
    LOAD_FIELD_NUMBER: _ClassVar[int]
    RESTARTS_FIELD_NUMBER: _ClassVar[int]
    slot: int
    endpoint: str
    serving: bool
    load: ServerLoad
    restarts: int
    def __init__(self, slot: _Optional[int] = ..., endpoint: _Optional[str] = ..., serving: _Optional[bool] = ..., load: _Optional[_Union[ServerLoad, _Mapping]] = ..., restarts: _Optional[int] = ...) -> None: ...

class SandboxIsolation(_message.Message):
    __slots__ = ("layers", "missing", "weak_allowed")
    LAYERS_FIELD_NUMBER: _ClassVar[int]
    MISSING_FIELD_NUMBER: _ClassVar[int]
    WEAK_ALLOWED_FIELD_NUMBER: _ClassVar[int]
    layers: _containers.RepeatedScalarFieldContainer[str]
    missing: _containers.RepeatedScalarFieldContainer[str]
    weak_allowed: bool
    def __init__(self, layers: _Optional[_Iterable[str]] = ..., missing: _Optional[_Iterable[str]] = ..., weak_allowed: _Optional[bool] = ...) -> None: ...

class ListScenariosRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListScenariosResponse(_message.Message):
    __slots__ = ("scenarios",)
    SCENARIOS_FIELD_NUMBER: _ClassVar[int]
    scenarios: _containers.RepeatedCompositeFieldContainer[_common_pb2.ScenarioSummary]
    def __init__(self, scenarios: _Optional[_Iterable[_Union[_common_pb2.ScenarioSummary, _Mapping]]] = ...) -> None: ...

class ListToolsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListToolsResponse(_message.Message):
    __slots__ = ("tools",)
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    tools: _containers.RepeatedCompositeFieldContainer[_common_pb2.ToolSpec]
    def __init__(self, tools: _Optional[_Iterable[_Union[_common_pb2.ToolSpec, _Mapping]]] = ...) -> None: ...

class CreateSessionRequest(_message.Message):
    __slots__ = ("scenario_id", "seed", "seats", "turn_policy", "reward_attribution", "team_spirit", "limits", "owner_token", "reward_mode", "request_id", "tell_seats_instance")
    SCENARIO_ID_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    TURN_POLICY_FIELD_NUMBER: _ClassVar[int]
    REWARD_ATTRIBUTION_FIELD_NUMBER: _ClassVar[int]
    TEAM_SPIRIT_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    OWNER_TOKEN_FIELD_NUMBER: _ClassVar[int]
    REWARD_MODE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    TELL_SEATS_INSTANCE_FIELD_NUMBER: _ClassVar[int]
    scenario_id: str
    seed: int
    seats: _containers.RepeatedCompositeFieldContainer[_common_pb2.SeatConfig]
    turn_policy: _common_pb2.TurnPolicy
    reward_attribution: _common_pb2.RewardAttribution
    team_spirit: float
    limits: _common_pb2.SessionLimits
    owner_token: str
    reward_mode: _common_pb2.RewardMode
    request_id: str
    tell_seats_instance: bool
    def __init__(self, scenario_id: _Optional[str] = ..., seed: _Optional[int] = ..., seats: _Optional[_Iterable[_Union[_common_pb2.SeatConfig, _Mapping]]] = ..., turn_policy: _Optional[_Union[_common_pb2.TurnPolicy, str]] = ..., reward_attribution: _Optional[_Union[_common_pb2.RewardAttribution, str]] = ..., team_spirit: _Optional[float] = ..., limits: _Optional[_Union[_common_pb2.SessionLimits, _Mapping]] = ..., owner_token: _Optional[str] = ..., reward_mode: _Optional[_Union[_common_pb2.RewardMode, str]] = ..., request_id: _Optional[str] = ..., tell_seats_instance: _Optional[bool] = ...) -> None: ...

class SeatToken(_message.Message):
    __slots__ = ("agent_id", "join_token")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    JOIN_TOKEN_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    join_token: str
    def __init__(self, agent_id: _Optional[str] = ..., join_token: _Optional[str] = ...) -> None: ...

class CreateSessionResponse(_message.Message):
    __slots__ = ("session", "tokens", "owner_token")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    OWNER_TOKEN_FIELD_NUMBER: _ClassVar[int]
    session: _common_pb2.SessionInfo
    tokens: _containers.RepeatedCompositeFieldContainer[SeatToken]
    owner_token: str
    def __init__(self, session: _Optional[_Union[_common_pb2.SessionInfo, _Mapping]] = ..., tokens: _Optional[_Iterable[_Union[SeatToken, _Mapping]]] = ..., owner_token: _Optional[str] = ...) -> None: ...

class GetSessionRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class GetSessionResponse(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: _common_pb2.SessionInfo
    def __init__(self, session: _Optional[_Union[_common_pb2.SessionInfo, _Mapping]] = ...) -> None: ...

class ListSessionsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListSessionsResponse(_message.Message):
    __slots__ = ("sessions",)
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    sessions: _containers.RepeatedCompositeFieldContainer[_common_pb2.SessionInfo]
    def __init__(self, sessions: _Optional[_Iterable[_Union[_common_pb2.SessionInfo, _Mapping]]] = ...) -> None: ...

class ResetSessionRequest(_message.Message):
    __slots__ = ("session_id", "seed")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    seed: int
    def __init__(self, session_id: _Optional[str] = ..., seed: _Optional[int] = ...) -> None: ...

class ResetSessionResponse(_message.Message):
    __slots__ = ("session", "observation")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    session: _common_pb2.SessionInfo
    observation: _common_pb2.Observation
    def __init__(self, session: _Optional[_Union[_common_pb2.SessionInfo, _Mapping]] = ..., observation: _Optional[_Union[_common_pb2.Observation, _Mapping]] = ...) -> None: ...

class CloseSessionRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class CloseSessionResponse(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: _common_pb2.SessionInfo
    def __init__(self, session: _Optional[_Union[_common_pb2.SessionInfo, _Mapping]] = ...) -> None: ...

class GetGradeRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class GetGradeResponse(_message.Message):
    __slots__ = ("grade", "agent_rewards", "reward_attribution")
    class AgentRewardsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    GRADE_FIELD_NUMBER: _ClassVar[int]
    AGENT_REWARDS_FIELD_NUMBER: _ClassVar[int]
    REWARD_ATTRIBUTION_FIELD_NUMBER: _ClassVar[int]
    grade: _common_pb2.Grade
    agent_rewards: _containers.ScalarMap[str, float]
    reward_attribution: _common_pb2.RewardAttribution
    def __init__(self, grade: _Optional[_Union[_common_pb2.Grade, _Mapping]] = ..., agent_rewards: _Optional[_Mapping[str, float]] = ..., reward_attribution: _Optional[_Union[_common_pb2.RewardAttribution, str]] = ...) -> None: ...

class GetTrajectoryRequest(_message.Message):
    __slots__ = ("session_id", "episode")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    EPISODE_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    episode: int
    def __init__(self, session_id: _Optional[str] = ..., episode: _Optional[int] = ...) -> None: ...

class GetTrajectoryResponse(_message.Message):
    __slots__ = ("events",)
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[_common_pb2.SessionEvent]
    def __init__(self, events: _Optional[_Iterable[_Union[_common_pb2.SessionEvent, _Mapping]]] = ...) -> None: ...
