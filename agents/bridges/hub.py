"""What one bridge process holds: its client of the server, the tools, and the seats it plays.

The bridge is a client of a running `metasre serve` like any other. It owns the sessions it
creates for its users (its client's owner credential never leaves it), and closes a reset's
session when the last of the bridge's seats in it leaves, so a trainer's thousands of resets do
not pile up open sessions (a POST /sessions one once its episode has ended and its last seat
left, since its seats may come one after another). A user reaches a session only through a
seat's join token, which the server checks: a token of one session opens no other.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import structlog

from ..client import ATTRIBUTIONS, REWARD_MODES, TURN_POLICIES, MetasreClient
from ..errors import ClientError
from .seat import BridgeSeat

log = structlog.get_logger(__name__)

SEED_RANGE = 2**31
"""Seeds drawn for a reset that names none: 0 <= seed < SEED_RANGE."""


class BridgeError(Exception):
    """Raised when a bridge request cannot be served; `code` is OpenEnv's WSErrorCode."""

    def __init__(self, message: str, code: str = "VALIDATION_ERROR") -> None:
        super().__init__(message)
        self.message = message
        self.code = code


CREATE_KEYS = frozenset(
    {
        "scenario",
        "seed",
        "split",
        "seats",
        "turn_policy",
        "attribution",
        "team_spirit",
        "reward_mode",
    }
)
"""What creating a session takes (a reset's data, a POST /sessions body)."""
SPLITS = ("train", "test")
"""A family's splits: no test seed's structure occurs in training; report on test only."""


class Splits(Protocol):
    """Which split a family's seed belongs to (the command line gives the simulator's)."""

    def split_of(self, scenario: str, seed: int) -> str:
        """'train' or 'test' for `seed` of `scenario`.

        Raises:
            LookupError: a scenario whose splits this bridge does not know.
        """
        ...


@dataclass(frozen=True, slots=True)
class Limits:
    """How much one bridge process takes on."""

    max_seats: int = 1024
    """Seats played at once through the bridge (WebSockets with a seat plus MCP sessions)."""
    max_message_bytes: int = 1 << 20
    """The largest message (a WebSocket frame, an HTTP body) the bridge reads."""


def _choice(name: str, value: Any, allowed: Sequence[str]) -> str:
    text = str(value).upper()
    if text not in allowed:
        raise BridgeError(f"{name} {value!r} is not one of {', '.join(allowed)}")
    return text


def _split_seed(
    scenario: str, seed: Any, split: Any, splits: Splits | None
) -> tuple[int, str | None]:
    """The seed to play and its split: drawn from `split` when no seed is given."""
    if split is not None and split not in SPLITS:
        raise BridgeError(f"split {split!r} is not one of {', '.join(SPLITS)}")
    if seed is not None and (
        isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < SEED_RANGE
    ):
        raise BridgeError(f"seed must be a whole number from 0 to {SEED_RANGE - 1}; got {seed!r}")
    if splits is None:
        if split is not None:
            raise BridgeError("this bridge does not know the families' splits; give a seed")
        return (secrets.randbelow(SEED_RANGE) if seed is None else seed), None
    try:
        if seed is None:
            # A quarter of a family's seeds are test seeds: a few draws find one of either.
            for _ in range(10_000):
                seed = secrets.randbelow(SEED_RANGE)
                if split is None or splits.split_of(scenario, seed) == split:
                    break
            else:
                raise BridgeError(f"found no {split} seed of {scenario}")
        found = splits.split_of(scenario, seed)
    except LookupError:
        if split is not None:
            raise BridgeError(
                f"this bridge does not know the splits of {scenario!r}; give a seed"
            ) from None
        return (secrets.randbelow(SEED_RANGE) if seed is None else seed), None
    if split is not None and found != split:
        raise BridgeError(f"seed {seed} of {scenario} is in the {found} split, not {split}")
    return seed, found


def session_request(data: Mapping[str, Any], splits: Splits | None = None) -> dict[str, Any]:
    """The create_session keyword arguments of a reset's or a POST /sessions' data.

    `split` ('train' or 'test') draws the seed from that split when none is given, and checks
    a given one; the seed's split comes back as `split` (None where `splits` cannot say).

    Raises:
        BridgeError: a value of the wrong type or outside what the server takes.
    """
    scenario = data.get("scenario")
    if not isinstance(scenario, str) or not scenario:
        raise BridgeError(
            "name the incident: scenario=FAMILY (an id such as meta-sre/payment-bad-deploy-v1 "
            "or a name such as payment-bad-deploy; GET /metadata lists them), or join a seat "
            "with session_id and token"
        )
    seed, split = _split_seed(scenario, data.get("seed"), data.get("split"), splits)
    seats = data.get("seats", ["agent"])
    if (
        not isinstance(seats, list)
        or not seats
        or not all(isinstance(s, str | dict) for s in seats)
    ):
        raise BridgeError(
            "seats must be a non-empty list of agent ids or of mappings with agent_id, role, "
            f"allowed_tools and view; got {seats!r}"
        )
    spirit = data.get("team_spirit", 0.0)
    if isinstance(spirit, bool) or not isinstance(spirit, int | float) or not 0 <= spirit <= 1:
        raise BridgeError(f"team_spirit must be a number from 0 to 1; got {spirit!r}")
    return {
        "scenario_id": scenario,
        "seed": seed,
        "seats": seats,
        "turn_policy": _choice(
            "turn_policy", data.get("turn_policy", "FREE_FOR_ALL"), TURN_POLICIES
        ),
        "attribution": _choice("attribution", data.get("attribution", "SHARED"), ATTRIBUTIONS),
        "team_spirit": float(spirit),
        "reward_mode": _choice("reward_mode", data.get("reward_mode", "DENSE"), REWARD_MODES),
        "split": split,
    }


def seat_ids(seats: Sequence[str | Mapping[str, Any]]) -> list[str]:
    """The agent ids of a seats list as `session_request` takes it."""
    return [s if isinstance(s, str) else str(s.get("agent_id", "")) for s in seats]


class Hub:
    """The bridge's client of the server and the seats it plays, bounded by `limits`."""

    def __init__(
        self, client: MetasreClient, limits: Limits | None = None, splits: Splits | None = None
    ) -> None:
        self.client = client
        self.limits = limits or Limits()
        self.splits = splits
        """Which split a seed is in; None: a bridge that cannot say (`split` is refused)."""
        self._tools: list[dict[str, Any]] | None = None
        self._scenarios: list[dict[str, Any]] | None = None
        self._seats = 0
        self._created: dict[str, int] = {}
        """Sessions this bridge created -> how many of its seats are in each now."""
        self._eager: set[str] = set()
        """Sessions closed as soon as their last seat leaves, ended or not (those a reset
        made); the others (POST /sessions) wait for their seats to come until their episode
        has ended."""
        self._lock = asyncio.Lock()

    async def tools(self) -> list[dict[str, Any]]:
        """Every tool (name, description, input_schema), asked of the server once."""
        if self._tools is None:
            self._tools = await self.client.list_tools()
        return self._tools

    async def scenarios(self) -> list[dict[str, Any]]:
        """The scenarios the server offers, asked once."""
        if self._scenarios is None:
            self._scenarios = await self.client.list_scenarios()
        return self._scenarios

    @property
    def seats(self) -> int:
        """Seats played through the bridge now."""
        return self._seats

    async def create(
        self, data: Mapping[str, Any], *, eager: bool = False
    ) -> tuple[str, dict[str, Any], dict[str, str]]:
        """Create a session owned by the bridge; (session id, what it is, agent id -> token).

        What it is: `scenario_id` as asked, `seed`, and `split` (None where unknown).

        `eager`: close it when its last seat leaves even mid-episode (a reset's session, whose
        creator holds a seat from the start); otherwise it is closed when its last seat leaves
        after the episode ended, or by the server's idle limit.

        Raises:
            BridgeError: bad parameters, or the server refused (its reason in the message).
        """
        request = session_request(data, self.splits)
        split = request.pop("split")
        try:
            handle = await self.client.create_session(**request)
        except ValueError as exc:  # the client's own checks of seats and views
            raise BridgeError(str(exc)) from None
        except ClientError as exc:
            raise BridgeError(f"the server refused the session: {exc}", "SESSION_ERROR") from None
        async with self._lock:
            self._created[handle.id] = 0
            if eager:
                self._eager.add(handle.id)
        log.info("bridge_session_created", session_id=handle.id, scenario=request["scenario_id"])
        made = {"scenario_id": request["scenario_id"], "seed": request["seed"], "split": split}
        return handle.id, made, dict(handle.tokens)

    async def join(self, session_id: str, token: str) -> BridgeSeat:
        """Take a seat with its join token (the server checks it).

        A refused join counts for nothing: a wrong token never closes the session it named.

        Raises:
            BridgeError: the bridge is full, or the server refused the token or the seat.
        """
        if not isinstance(session_id, str) or not isinstance(token, str) or not token:
            raise BridgeError("joining a seat takes session_id and token, both strings")
        async with self._lock:
            if self._seats >= self.limits.max_seats:
                raise BridgeError(
                    f"the bridge plays {self.limits.max_seats} seats at once (its --max-seats);"
                    " try again when one has left",
                    "CAPACITY_REACHED",
                )
            self._seats += 1  # held while the join is under way
        conn = self.client.agent(session_id, token)
        try:
            await conn.join()
        except BaseException as exc:
            async with self._lock:
                self._seats -= 1
            if isinstance(exc, ClientError):
                raise BridgeError(
                    f"the server refused the seat: {exc.reason or exc.code}: {exc.message}",
                    "SESSION_ERROR",
                ) from None
            raise
        async with self._lock:
            created = session_id in self._created
            if created:
                self._created[session_id] += 1
        return BridgeSeat(conn, created=created)

    async def leave(self, seat: BridgeSeat, *, close_if_last: bool = True) -> None:
        """Hang up a seat; the last of the bridge's seats in a session it made closes it.

        `close_if_last=False` for a seat taken by mistake (a token used on another seat's
        path): letting it go must not end the session for the seats still to come.
        """
        with contextlib.suppress(ClientError):
            await seat.conn.close()
        async with self._lock:
            self._seats -= 1
            sid = seat.session_id
            if not seat.created or sid not in self._created:
                return
            self._created[sid] -= 1
            ended = seat.conn.inbox.episode_end is not None
            if self._created[sid] > 0 or not close_if_last or not (ended or sid in self._eager):
                return
            del self._created[sid]
            self._eager.discard(sid)
        with contextlib.suppress(ClientError):
            await self.client.close_session(sid)

    async def close(self) -> None:
        """Close every session the bridge created (its seats' streams end with them)."""
        async with self._lock:
            created, self._created = list(self._created), {}
            self._eager.clear()
        for session_id in created:
            with contextlib.suppress(ClientError):
                await self.client.close_session(session_id)


__all__ = [
    "CREATE_KEYS",
    "SEED_RANGE",
    "SPLITS",
    "BridgeError",
    "Hub",
    "Limits",
    "Splits",
    "seat_ids",
    "session_request",
]
