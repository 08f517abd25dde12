"""Sessions and log entries as the trajectory store keeps them: plain JSON, no protobuf.

`session_config` holds everything needed to rebuild a session and replay it (`spec_from_config`
reads it back); `event_record` turns one log entry into the (kind, agent_id, payload) of a stored
event. The payload keys are the fields of the entry types in `metasre.service.core.events`, with the
observation and the grade as nested objects, so a stored trajectory reads like the wire protocol.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from ...simulator import EpisodePhase, Grade, Observation
from ...simulator.grader import GradeComponent
from ...simulator.observation import AlertView, ServiceRow
from ...simulator.views import View
from ..core.attribution import Attribution, RewardMode
from ..core.events import (
    Applied,
    Ended,
    Event,
    LogEntry,
    Message,
    Reward,
    Started,
    Turn,
)
from ..core.openings import OpeningForms, observation_text
from ..core.session import SeatSpec, Session, SessionSpec, TurnPolicy
from ..version import PROTOCOL_VERSION, SERVER_VERSION
from .contract import EventRow, SessionRow, Store


class StoreRecorder:
    """Records sessions in a `Store`: the `Recorder` of `metasre.service.core.session`.

    Each `record` is one transaction, and the store commits the transactions of many sessions
    together, so sessions never wait for each other's writes one by one.
    """

    def __init__(self, store: Store) -> None:
        self.store = store

    async def record(
        self, session: Session, entries: Sequence[LogEntry], *, opening: bool, closing: bool
    ) -> None:
        """Commit `entries`, after the session's row when `opening`, then its close."""
        store = self.store
        ops = []
        if opening:
            spec = session.spec
            row = SessionRow(
                session.id,
                spec.scenario_id,
                spec.seed,
                {**session_config(spec), "auth": auth_record(session)},
                session.created_at,
                None,
            )
            ops.append(store.session_op(row))
            if session.request is not None:  # in the same transaction: the id is the session's
                ops.append(store.request_op(session.request[0], session.id, session.request[1]))
        ops += [store.event_op(event_row(session.id, e)) for e in entries]
        if closing:
            ops.append(store.close_op(session.id))
        await store.write(ops)

    async def past(self, session_id: str, start: int, end: int) -> Sequence[LogEntry]:
        """The committed entries numbered `start + 1` to `end` of a session's log."""
        rows = await asyncio.to_thread(
            self.store.events, session_id, after_sequence=start, through=end
        )
        return [entry_of(r) for r in rows]

    async def first_at(self, session_id: str, episode: int, tick: int) -> int | None:
        """The sequence of a session's first committed entry at or after (episode, tick)."""
        return await asyncio.to_thread(self.store.first_sequence, session_id, episode, tick)


def session_config(spec: SessionSpec) -> dict[str, Any]:
    """Everything needed to rebuild the session `spec` describes (see `spec_from_config`)."""
    return {
        "scenario_id": spec.scenario_id,
        "seed": spec.seed,
        "seats": [
            {
                "agent_id": s.agent_id,
                "role": s.role,
                "allowed_tools": sorted(s.allowed_tools),
                **({"view": s.view.model_dump(mode="json")} if s.view is not None else {}),
            }
            for s in spec.seats
        ],
        "turn_policy": spec.policy.value,
        "reward_attribution": spec.attribution.value,
        "reward_mode": spec.reward_mode.value,
        "tell_seats_instance": spec.tell_seats_instance,
        "team_spirit": spec.team_spirit,
        "limits": {"turn_timeout_seconds": spec.turn_timeout_seconds},
        "protocol_version": PROTOCOL_VERSION,
        "server_version": SERVER_VERSION,
    }


def auth_record(session: Session) -> dict[str, Any]:
    """What checks a session's seat tokens after a restart: digests and the resume-token key.

    No token is in it, and none can be made from it without the seat's join token (see
    `metasre.service.core.auth`). Not part of exported trajectories.
    """
    return {
        "token_digest": "sha256",
        "resume_key": session.token_key.hex(),
        "owner_sha256": session.owner_digest,
        "seats": [
            {"agent_id": s.agent_id, "join_sha256": s.join_digest, "resume_sha256": s.resume_digest}
            for s in session.seats
        ],
    }


def keys_from_config(config: Mapping[str, Any]) -> tuple[bytes, list[tuple[str, str]]]:
    """The resume-token key and each seat's (join, resume) token digests, in seat order.

    Raises:
        KeyError: the config holds no keys (a session stored by an older server).
    """
    auth = config["auth"]
    return bytes.fromhex(auth["resume_key"]), [
        (str(s["join_sha256"]), str(s["resume_sha256"])) for s in auth["seats"]
    ]


def owner_from_config(config: Mapping[str, Any]) -> str | None:
    """The owner token's digest, None for a session stored by a server without owners."""
    owner = config.get("auth", {}).get("owner_sha256")
    return str(owner) if owner else None


def spec_from_config(config: Mapping[str, Any]) -> SessionSpec:
    """The SessionSpec a stored session config describes."""
    return SessionSpec(
        scenario_id=str(config["scenario_id"]),
        seed=int(config["seed"]),
        seats=tuple(
            SeatSpec(
                str(s["agent_id"]),
                str(s["role"]),
                frozenset(s["allowed_tools"]),
                View.model_validate(s["view"]) if s.get("view") is not None else None,
            )
            for s in config["seats"]
        ),
        policy=TurnPolicy(config["turn_policy"]),
        attribution=Attribution(config["reward_attribution"]),
        team_spirit=float(config["team_spirit"]),
        turn_timeout_seconds=float(config["limits"]["turn_timeout_seconds"]),
        # a session stored before reward modes existed was dense
        reward_mode=RewardMode(config.get("reward_mode", RewardMode.DENSE.value)),
        # a session stored before seats could be kept from it told them
        tell_seats_instance=bool(config.get("tell_seats_instance", True)),
    )


def event_row(session_id: str, entry: LogEntry) -> EventRow:
    """The stored form of one log entry."""
    kind, agent_id, payload = event_record(entry)
    return EventRow(session_id, entry.sequence, entry.episode, entry.tick, kind, agent_id, payload)


def event_record(entry: LogEntry) -> tuple[str, str, dict[str, Any]]:
    """(kind, agent_id, payload) of one log entry; agent_id is empty for episode events."""
    event = entry.event
    kind = _KIND_OF[type(event)]
    return kind.name, kind.agent(event), kind.encode(event)


def observation_record(obs: Observation) -> dict[str, Any]:
    """An observation as plain data, with `text`: what an LLM agent is shown.

    The same data as `obs.to_dict()`, built field by field: `dataclasses.asdict` deep-copies
    every value and costs a quarter of a millisecond per applied call.
    """
    out = _flat(obs)
    out["alerts"] = [_flat(a) for a in obs.alerts]
    out["services"] = [_flat(s) for s in obs.services]
    out["text"] = observation_text(obs)
    return out


# The record of an opening, the largest part of a new session's first write, is built once for
# every episode of its scenario and seed. Shared: only read, never changed.
_OPENING_RECORDS: OpeningForms[dict[str, Any]] = OpeningForms(64, observation_record)


def _opening_record(obs: Observation) -> dict[str, Any]:
    return _OPENING_RECORDS.get(obs)


def _flat(value: Any) -> dict[str, Any]:
    # The observation's parts are slotted dataclasses of str, numbers and tuples of str.
    return {
        name: list(v) if isinstance(v := getattr(value, name), tuple) else v
        for name in value.__slots__
    }


def grade_record(grade: Grade) -> dict[str, Any]:
    """A grade as plain data, components with the value each adds to the total."""
    return {
        "total": grade.total,
        "resolved": grade.resolved,
        "final": grade.final,
        "components": [
            {
                "name": c.name,
                "score": c.score,
                "weight": c.weight,
                "value": c.value,
                "detail": c.detail,
            }
            for c in grade.components
        ],
        "fail_to_pass": dict(grade.fail_to_pass),
        "pass_to_pass": dict(grade.pass_to_pass),
    }


# -- the codec's table: each event type, its stored kind, and each field's (de)coder ---------------


def entry_of(row: EventRow) -> LogEntry:
    """The log entry a stored row records."""
    return LogEntry(sequence=row.sequence, episode=row.episode, tick=row.tick, event=event_of(row))


def event_of(row: EventRow) -> Event:
    """The log event a stored row records.

    Raises:
        ValueError: the row's kind is not one of `KINDS`.
    """
    kind = _KIND_NAMED.get(row.kind)
    if kind is None:
        raise ValueError(f"unknown event kind {row.kind!r}; known: {', '.join(_KIND_NAMED)}")
    return kind.decode(row.payload)


def observation_of(p: Mapping[str, Any]) -> Observation:
    """A stored observation (its rendered `text` is dropped: it is rendered again)."""
    values = {f.name: p[f.name] for f in fields(Observation)}
    values["alerts"] = tuple(
        AlertView(**{f.name: a[f.name] for f in fields(AlertView)}) for a in p["alerts"]
    )
    rows = []
    for s in p["services"]:
        row: dict[str, Any] = {f.name: s[f.name] for f in fields(ServiceRow)}
        row["depends_on"] = tuple(row["depends_on"])
        rows.append(ServiceRow(**row))
    values["services"] = tuple(rows)
    values["terminal"] = tuple(p["terminal"])
    return Observation(**values)


def grade_of(p: Mapping[str, Any]) -> Grade:
    """A stored grade."""
    return Grade(
        total=float(p["total"]),
        resolved=bool(p["resolved"]),
        components=tuple(
            GradeComponent(
                name=str(c["name"]),
                score=float(c["score"]),
                weight=float(c["weight"]),
                detail=str(c["detail"]),
            )
            for c in p["components"]
        ),
        fail_to_pass={str(k): bool(v) for k, v in p["fail_to_pass"].items()},
        pass_to_pass={str(k): bool(v) for k, v in p["pass_to_pass"].items()},
        final=bool(p["final"]),
    )


_Codec = tuple[Callable[[Any], Any], Callable[[Any], Any]]
"""How one field is stored and read back: (encode, decode)."""


def _float_map(m: Mapping[str, Any]) -> dict[str, float]:
    return {str(k): float(v) for k, v in m.items()}


def _optional_reward(p: Mapping[str, Any] | None) -> Reward | None:
    if p is None:
        return None
    reward = _REWARD.decode(p)
    assert isinstance(reward, Reward)
    return reward


def _encoded_reward(r: Reward | None) -> dict[str, Any] | None:
    return None if r is None else _REWARD.encode(r)


# By the field's annotation, as written in `metasre.service.core.events` (a new field of a new type
# fails at import here, not at the first write).
_FIELD_CODECS: Mapping[str, _Codec] = {
    "int": (int, int),
    "float": (float, float),
    "str": (str, str),
    "bool": (bool, bool),
    "Mapping[str, Any]": (dict, dict),
    "Mapping[str, float]": (dict, _float_map),
    "tuple[str, ...]": (list, tuple),
    "EpisodePhase": (lambda phase: phase.value, EpisodePhase),
    "Observation": (observation_record, observation_of),
    "Grade": (grade_record, grade_of),
    "Reward | None": (_encoded_reward, _optional_reward),
}
_OVERRIDES: Mapping[tuple[type, str], _Codec] = {
    # every episode of a scenario and seed opens with the same observation: stored from a cache
    (Started, "observation"): (_opening_record, observation_of),
}


@dataclass(frozen=True, slots=True)
class Kind:
    """One event type as the store keeps it."""

    name: str
    """The row's `kind`."""
    cls: type[Event]
    agent_field: str | None
    """The field stored in the row's agent_id column; None: the column is empty."""
    fields: tuple[tuple[str, Callable[[Any], Any], Callable[[Any], Any]], ...]

    @classmethod
    def of(cls, name: str, event_cls: type[Event], agent_field: str | None) -> Kind:
        """The kind of `event_cls`, its fields' codecs found by their annotations."""
        codecs = tuple(
            (f.name, *_OVERRIDES.get((event_cls, f.name), _FIELD_CODECS[str(f.type)]))
            for f in fields(event_cls)
        )
        return cls(name, event_cls, agent_field, codecs)

    def agent(self, event: Any) -> str:
        """The row's agent_id column for `event`."""
        return "" if self.agent_field is None else str(getattr(event, self.agent_field))

    def encode(self, event: Any) -> dict[str, Any]:
        """The payload: each field by name, as plain data."""
        return {name: encode(getattr(event, name)) for name, encode, _ in self.fields}

    def decode(self, payload: Mapping[str, Any]) -> Event:
        """The event a payload records."""
        event: Event = self.cls(**{name: decode(payload[name]) for name, _, decode in self.fields})
        return event


_REWARD = Kind.of("reward", Reward, "agent_id")
KINDS: tuple[Kind, ...] = (
    Kind.of("applied", Applied, "agent_id"),
    _REWARD,
    Kind.of("message", Message, "sender"),
    Kind.of("turn", Turn, "agent_id"),
    Kind.of("started", Started, None),
    Kind.of("ended", Ended, None),
)
"""Every event type the log holds, with its stored kind: the one table of the codec."""
_KIND_OF: Mapping[type, Kind] = {k.cls: k for k in KINDS}
_KIND_NAMED: Mapping[str, Kind] = {k.name: k for k in KINDS}
