"""Every sandboxed run sees the same clock and the same random numbers.

Stdlib only (runs inside the sandboxed child). A run must be a function of its files: the
episode replays it on recovery, counterfactual credit replays it without a seat's calls, and a
re-grade runs the hidden checks again; code that reads the time or draws a random number would
otherwise grade differently each time. So before any code of the run is imported:

- the wall clock (``time.time``, ``datetime.now``/``utcnow``/``today``, ``date.today``, the
  ``time`` functions that default to now) starts at ``EPOCH`` in UTC, and every clock
  (``monotonic``, ``perf_counter``, ``clock_gettime``) starts at a fixed reading; each read
  moves a clock on by a microsecond, so a loop that waits for time to pass still ends, the
  same way every time;
- ``time.sleep`` and a selector's timed wait (asyncio's ``sleep``, ``wait_for``) move the
  clock on by what they would wait, at once;
- ``random`` (the module's functions and every new ``Random()``), ``os.urandom``,
  ``os.getrandom``, ``secrets``, ``SystemRandom`` and ``uuid`` (1 and 4) draw from streams
  seeded with ``SEED``; the hash seed is fixed by the helper's environment
  (``PYTHONHASHSEED=0``).

This is no containment: code that wants another clock can find one (a C clock through
``ctypes``, ``/proc/uptime``). It serves honest code that happens to depend on time or chance.
"""

from __future__ import annotations

import datetime as _datetime
import os
import random
import selectors
import time
import uuid
from collections.abc import Callable
from typing import Any

__all__ = ["EPOCH", "SEED", "install"]

EPOCH = 1_796_083_200.0
"""2026-12-01T00:00:00Z: what the wall clock reads when a run starts."""
_BOOT = 86_400.0
"""What the monotonic clocks read when a run starts."""
_TICK = 1e-6
SEED = 20261201
"""The seed of every random stream of a run."""


class _Clock:
    """Seconds since the run began: moved on by every read, and by every wait."""

    def __init__(self) -> None:
        self.elapsed = 0.0

    def read(self) -> float:
        self.elapsed += _TICK
        return self.elapsed

    def wait(self, seconds: float) -> None:
        if seconds > 0:
            self.elapsed += seconds


def install() -> None:
    """Fix the clocks and seed the random streams of this process (once per run)."""
    clock = _Clock()
    _fix_time(clock)
    _fix_datetime()
    _fix_selectors(clock)
    _fix_random()


def _fix_time(clock: _Clock) -> None:
    os.environ["TZ"] = "UTC"
    time.tzset()
    real_localtime, real_gmtime = time.localtime, time.gmtime
    real_ctime, real_strftime, real_asctime = time.ctime, time.strftime, time.asctime

    def wall() -> float:
        return EPOCH + clock.read()

    def boot() -> float:
        return _BOOT + clock.read()

    def sleep(seconds: float) -> None:
        if seconds < 0:
            raise ValueError("sleep length must be non-negative")
        clock.wait(seconds)

    def localtime(secs: float | None = None) -> time.struct_time:
        return real_localtime(wall() if secs is None else secs)

    def gmtime(secs: float | None = None) -> time.struct_time:
        return real_gmtime(wall() if secs is None else secs)

    def ctime(secs: float | None = None) -> str:
        return real_ctime(wall() if secs is None else secs)

    def asctime(t: Any = None) -> str:
        return real_asctime(real_localtime(wall()) if t is None else t)

    def strftime(fmt: str, t: Any = None) -> str:
        return real_strftime(fmt, real_localtime(wall()) if t is None else t)

    def clock_gettime(clk_id: int) -> float:
        return wall() if clk_id == time.CLOCK_REALTIME else boot()

    def clock_gettime_ns(clk_id: int) -> int:
        return int(clock_gettime(clk_id) * 1e9)

    fixed: dict[str, Callable[..., Any]] = {
        "time": wall,
        "time_ns": lambda: int(wall() * 1e9),
        "monotonic": boot,
        "monotonic_ns": lambda: int(boot() * 1e9),
        "perf_counter": boot,
        "perf_counter_ns": lambda: int(boot() * 1e9),
        "sleep": sleep,
        "localtime": localtime,
        "gmtime": gmtime,
        "ctime": ctime,
        "asctime": asctime,
        "strftime": strftime,
        "clock_gettime": clock_gettime,
        "clock_gettime_ns": clock_gettime_ns,
    }
    for name, function in fixed.items():
        setattr(time, name, function)


class _StandIn(type):
    """The metaclass of a stand-in class: every instance of the real class counts as one.

    Code that ran before the stand-in (preloaded modules, C functions) still makes the real
    class's instances; ``isinstance(x, datetime.date)`` must stay true for them.
    """

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, cls.__mro__[1])

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, cls.__mro__[1])


def _fix_datetime() -> None:
    class datetime(_datetime.datetime, metaclass=_StandIn):  # named like the class it stands for
        @classmethod
        def now(cls, tz: _datetime.tzinfo | None = None) -> Any:
            return cls.fromtimestamp(time.time(), tz)

        @classmethod
        def utcnow(cls) -> Any:
            return cls.utcfromtimestamp(time.time())

        @classmethod
        def today(cls) -> Any:
            return cls.fromtimestamp(time.time())

        def __repr__(self) -> str:
            return "datetime." + str(super().__repr__())

    class date(_datetime.date, metaclass=_StandIn):
        @classmethod
        def today(cls) -> Any:
            return cls.fromtimestamp(time.time())

        def __repr__(self) -> str:
            return "datetime." + str(super().__repr__())

    for stand_in in (datetime, date):
        stand_in.__module__ = "datetime"
        stand_in.__qualname__ = stand_in.__name__
    _datetime.datetime = datetime  # type: ignore[misc]
    _datetime.date = date  # type: ignore[misc]


def _fix_selectors(clock: _Clock) -> None:
    """A timed wait with nothing ready returns at once, the clock moved on by its timeout."""
    for name in ("SelectSelector", "PollSelector", "EpollSelector", "DevpollSelector"):
        cls = getattr(selectors, name, None)
        if cls is None:
            continue
        real = cls.select

        def select(self: Any, timeout: float | None = None, _real: Any = real) -> Any:
            ready = _real(self, 0)
            if ready or timeout is None or timeout <= 0:
                return ready if ready or timeout is not None else _real(self, None)
            clock.wait(timeout)
            return _real(self, 0)

        cls.select = select


def _fix_random() -> None:
    stream = random.Random(SEED)
    seeds = random.Random(SEED + 1)
    real_seed = random.Random.seed

    def urandom(size: int) -> bytes:
        return stream.randbytes(size)

    def getrandom(size: int, flags: int = 0) -> bytes:
        return stream.randbytes(size)

    def seed(self: random.Random, a: Any = None, version: int = 2) -> None:
        # a new Random() asks the OS for its seed; here it gets the next of a fixed sequence
        real_seed(self, seeds.getrandbits(64) if a is None else a, version)

    os.urandom = urandom
    if hasattr(os, "getrandom"):
        os.getrandom = getrandom
    random.Random.seed = seed  # type: ignore[method-assign]
    random._urandom = urandom  # type: ignore[attr-defined]  # SystemRandom reads this name
    random.seed(SEED)
    # uuid1 from the fixed clock and a fixed node, not the machine's MAC address
    uuid._generate_time_safe = None  # type: ignore[attr-defined]
    uuid._node = 0x02_00_5E_10_00_01  # type: ignore[attr-defined]
    uuid._last_timestamp = None  # type: ignore[attr-defined]
