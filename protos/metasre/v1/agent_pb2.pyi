from google.protobuf import struct_pb2 as _struct_pb2
from google.rpc import status_pb2 as _status_pb2
from metasre.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class JoinSeat(_message.Message):
    __slots__ = ("session_id", "join_token", "options")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    JOIN_TOKEN_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    join_token: str
    options: StreamOptions
    def __init__(self, session_id: _Optional[str] = ..., join_token: _Optional[str] = ..., options: _Optional[_Union[StreamOptions, _Mapping]] = ...) -> None: ...

class ResumeSeat(_message.Message):
    __slots__ = ("session_id", "resume_token", "after_sequence", "options")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    RESUME_TOKEN_FIELD_NUMBER: _ClassVar[int]
    AFTER_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    resume_token: str
    after_sequence: int
    options: StreamOptions
    def __init__(self, session_id: _Optional[str] = ..., resume_token: _Optional[str] = ..., after_sequence: _Optional[int] = ..., options: _Optional[_Union[StreamOptions, _Mapping]] = ...) -> None: ...

class StreamOptions(_message.Message):
    __slots__ = ("batch_events", "data_as_json")
    BATCH_EVENTS_FIELD_NUMBER: _ClassVar[int]
    DATA_AS_JSON_FIELD_NUMBER: _ClassVar[int]
    batch_events: bool
    data_as_json: bool
    def __init__(self, batch_events: _Optional[bool] = ..., data_as_json: _Optional[bool] = ...) -> None: ...

class ToolCall(_message.Message):
    __slots__ = ("call_id", "tool", "args")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    call_id: str
    tool: str
    args: _struct_pb2.Struct
    def __init__(self, call_id: _Optional[str] = ..., tool: _Optional[str] = ..., args: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ConnectRequest(_message.Message):
    __slots__ = ("join", "resume", "call")
    JOIN_FIELD_NUMBER: _ClassVar[int]
    RESUME_FIELD_NUMBER: _ClassVar[int]
    CALL_FIELD_NUMBER: _ClassVar[int]
    join: JoinSeat
    resume: ResumeSeat
    call: ToolCall
    def __init__(self, join: _Optional[_Union[JoinSeat, _Mapping]] = ..., resume: _Optional[_Union[ResumeSeat, _Mapping]] = ..., call: _Optional[_Union[ToolCall, _Mapping]] = ...) -> None: ...

class Joined(_message.Message):
    __slots__ = ("session", "agent_id", "role", "resume_token", "observation", "view")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    RESUME_TOKEN_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    session: _common_pb2.SessionInfo
    agent_id: str
    role: str
    resume_token: str
    observation: _common_pb2.Observation
    view: _common_pb2.View
    def __init__(self, session: _Optional[_Union[_common_pb2.SessionInfo, _Mapping]] = ..., agent_id: _Optional[str] = ..., role: _Optional[str] = ..., resume_token: _Optional[str] = ..., observation: _Optional[_Union[_common_pb2.Observation, _Mapping]] = ..., view: _Optional[_Union[_common_pb2.View, _Mapping]] = ...) -> None: ...

class ToolResult(_message.Message):
    __slots__ = ("call_id", "tick", "ok", "error_code", "text", "data", "observation", "reward", "phase", "data_json")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TICK_FIELD_NUMBER: _ClassVar[int]
    OK_FIELD_NUMBER: _ClassVar[int]
    ERROR_CODE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    REWARD_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    DATA_JSON_FIELD_NUMBER: _ClassVar[int]
    call_id: str
    tick: int
    ok: bool
    error_code: str
    text: str
    data: _struct_pb2.Struct
    observation: _common_pb2.Observation
    reward: _common_pb2.RewardUpdate
    phase: _common_pb2.EpisodePhase
    data_json: bytes
    def __init__(self, call_id: _Optional[str] = ..., tick: _Optional[int] = ..., ok: _Optional[bool] = ..., error_code: _Optional[str] = ..., text: _Optional[str] = ..., data: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., observation: _Optional[_Union[_common_pb2.Observation, _Mapping]] = ..., reward: _Optional[_Union[_common_pb2.RewardUpdate, _Mapping]] = ..., phase: _Optional[_Union[_common_pb2.EpisodePhase, str]] = ..., data_json: _Optional[bytes] = ...) -> None: ...

class ConnectResponse(_message.Message):
    __slots__ = ("call_id", "joined", "turn", "result", "applied", "message", "reward", "episode_end", "error", "episode_start", "batch", "sequence")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    JOINED_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    APPLIED_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    REWARD_FIELD_NUMBER: _ClassVar[int]
    EPISODE_END_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    EPISODE_START_FIELD_NUMBER: _ClassVar[int]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    call_id: str
    joined: Joined
    turn: _common_pb2.TurnGranted
    result: ToolResult
    applied: _common_pb2.AppliedCall
    message: _common_pb2.TeamMessage
    reward: _common_pb2.RewardUpdate
    episode_end: _common_pb2.EpisodeEnded
    error: _status_pb2.Status
    episode_start: _common_pb2.EpisodeStarted
    batch: EventBatch
    sequence: int
    def __init__(self, call_id: _Optional[str] = ..., joined: _Optional[_Union[Joined, _Mapping]] = ..., turn: _Optional[_Union[_common_pb2.TurnGranted, _Mapping]] = ..., result: _Optional[_Union[ToolResult, _Mapping]] = ..., applied: _Optional[_Union[_common_pb2.AppliedCall, _Mapping]] = ..., message: _Optional[_Union[_common_pb2.TeamMessage, _Mapping]] = ..., reward: _Optional[_Union[_common_pb2.RewardUpdate, _Mapping]] = ..., episode_end: _Optional[_Union[_common_pb2.EpisodeEnded, _Mapping]] = ..., error: _Optional[_Union[_status_pb2.Status, _Mapping]] = ..., episode_start: _Optional[_Union[_common_pb2.EpisodeStarted, _Mapping]] = ..., batch: _Optional[_Union[EventBatch, _Mapping]] = ..., sequence: _Optional[int] = ...) -> None: ...

class EventBatch(_message.Message):
    __slots__ = ("events",)
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[ConnectResponse]
    def __init__(self, events: _Optional[_Iterable[_Union[ConnectResponse, _Mapping]]] = ...) -> None: ...

class CallToolRequest(_message.Message):
    __slots__ = ("session_id", "token", "call")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    CALL_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    token: str
    call: ToolCall
    def __init__(self, session_id: _Optional[str] = ..., token: _Optional[str] = ..., call: _Optional[_Union[ToolCall, _Mapping]] = ...) -> None: ...

class CallToolResponse(_message.Message):
    __slots__ = ("result",)
    RESULT_FIELD_NUMBER: _ClassVar[int]
    result: ToolResult
    def __init__(self, result: _Optional[_Union[ToolResult, _Mapping]] = ...) -> None: ...
