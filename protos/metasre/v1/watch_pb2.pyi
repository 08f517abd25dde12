from metasre.v1 import common_pb2 as _common_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class WatchSessionRequest(_message.Message):
    __slots__ = ("session_id", "from_tick", "episode")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_TICK_FIELD_NUMBER: _ClassVar[int]
    EPISODE_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    from_tick: int
    episode: int
    def __init__(self, session_id: _Optional[str] = ..., from_tick: _Optional[int] = ..., episode: _Optional[int] = ...) -> None: ...

class WatchSessionResponse(_message.Message):
    __slots__ = ("event",)
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: _common_pb2.SessionEvent
    def __init__(self, event: _Optional[_Union[_common_pb2.SessionEvent, _Mapping]] = ...) -> None: ...
