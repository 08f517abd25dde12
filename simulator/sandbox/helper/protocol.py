"""Wire format between a sandboxed child and its supervisor: keyed, numbered, framed JSON.

Stdlib only: this module is also imported inside the helper process, which runs without
site-packages.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CONTROL_MAX",
    "DEFAULT_PRELOAD",
    "DONE",
    "EXIT_FIELDS",
    "EXIT_SETUP_FAILED",
    "GO_FIELDS",
    "HEADER",
    "MAC_SIZE",
    "MAX_FRAME",
    "REQUEST_FIELDS",
    "ChildPlan",
    "FrameReader",
    "FrameWriter",
    "TamperError",
    "clean_text",
    "decode_request",
    "encode_request",
    "make_request",
    "read_exact",
    "write_all",
]

EXIT_SETUP_FAILED = 70
"""Exit code of a child that failed before it could send a single frame."""

MAC_SIZE = 16
MAX_FRAME = 1 << 20
"""Largest payload a child may send in one frame; anything bigger is treated as tampering."""

_HEADER = struct.Struct(">I")
_LENGTH = struct.Struct(">Q")

REQUEST_FIELDS = {
    "plan": "the child's ChildPlan as a dict (ChildPlan.to_wire), or None in a fork-server"
    " child, which got it in its go message",
    "files": "{relative path: content} to materialise in the run folder",
    "tests": "test modules to run, in order (a visible run); empty for a probe run",
    "probe_file": "the module holding the probes (a grader run), or None",
    "probes": "the probe functions to call, in order (a grader run)",
    "limits": "SandboxLimits.to_wire(): {limit name: value}",
    "keys": "{path: key} under which the fork server filed what it learned about each file",
    "strict": "True: a containment layer that cannot be set up fails the run",
    "frame_key": "the key authenticating the child's report frames (see FrameWriter)",
}
"""The request a child reads first, by field: one marshalled dict, length-prefixed. It goes from
the caller straight to the child: the helper never holds it.

Every message between the caller, the helper and a child is one of:

- this request, caller to child;
- the child's keyed frames (``{"t": kind, ...}``: collect, start, outcome, observation,
  collection_error, violation, codegen, end), child to caller over the report pipe, which the
  caller made: the helper never reads a run's frames or output, so nothing a run produced is
  ever in the memory that later runs are forked from;
- on the helper's control socket, caller to helper: a run (``HEADER`` plus three descriptors:
  the request socket and the write ends of the report and output pipes), bytecode lessons
  (``b"C"``) and generated-code texts (``b"G"``), both for files every session has;
- the go message, helper to a spare: ``GO_FIELDS`` plus the three descriptors;
- the exit message, helper to caller on the request socket once the child is gone:
  ``EXIT_FIELDS`` as JSON. The caller closing that socket first tells the helper it has heard
  everything it needs: the run is killed."""

GO_FIELDS = ("run_dir", "uid", "scratch_dir", "new_namespaces")
"""The go message a spare gets (marshalled dict): ChildPlan's fields but the descriptors."""

EXIT_FIELDS = {
    "wait_status": "the raw status from wait4, or None if the child could not be reaped",
    "cpu_seconds": "user plus system CPU time the child used",
    "timed_out": "True when the helper killed the child at the wall deadline",
    "failure": "why the helper could not run it at all ('' when it ran)",
}


class TamperError(Exception):
    """Raised when a frame fails its MAC, arrives out of order, or is malformed."""


def clean_text(text: str, limit: int) -> str:
    """Return ``text`` cut to ``limit`` characters, with lone surrogates made printable."""
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def encode_request(**fields: Any) -> bytes:
    """Return the length-prefixed request a child reads first (fields: REQUEST_FIELDS)."""
    unknown = set(fields) ^ set(REQUEST_FIELDS)
    if unknown:
        raise ValueError(f"request fields differ from REQUEST_FIELDS: {sorted(unknown)}")
    body = marshal.dumps(fields)
    return _LENGTH.pack(len(body)) + body


def decode_request(fd: int) -> dict[str, Any]:
    """Read one request from a blocking descriptor (from our own caller, over a private pipe)."""
    (size,) = _LENGTH.unpack(read_exact(fd, _LENGTH.size))
    request = marshal.loads(read_exact(fd, size))
    if not isinstance(request, dict) or set(request) != set(REQUEST_FIELDS):
        raise ValueError("malformed sandbox request")
    return request


@dataclass(frozen=True, slots=True)
class ChildPlan:
    """Where and how one run happens; built by the supervisor before the child exists."""

    request_fd: int
    """Blocking descriptor carrying the length-prefixed marshalled request."""

    report_fd: int
    """Write end of the report pipe (keyed frames)."""

    output_fd: int
    """Write end of the output pipe; becomes the child's fds 1 and 2."""

    run_dir: str
    """Folder to create and run in; must not exist yet; its parent is root-owned."""

    uid: int | None
    """Unprivileged uid/gid unique to this run, or None to keep the current user."""

    new_namespaces: bool
    """Unshare a network (and, if needed, mount) namespace for this run alone."""

    scratch_dir: str
    """Root-only directory for temporary mount points."""

    def to_wire(self) -> dict[str, Any]:
        """Return the plan as a marshal-able dict of its fields."""
        return {name: getattr(self, name) for name in self.__slots__}


def make_request(
    plan: ChildPlan | None,
    files: Mapping[str, bytes],
    limits: Mapping[str, Any],
    *,
    tests: Sequence[str] = (),
    probe_file: str | None = None,
    probes: Sequence[str] = (),
    keys: Mapping[str, bytes] | None = None,
    strict: bool = True,
    frame_key: bytes,
) -> bytes:
    """Return the request a child reads first (``protocol.REQUEST_FIELDS`` names the fields).

    ``keys`` maps sources to the keys the fork server files what it learned about them under
    (see sandbox._bytecode.file_key); a child finds nothing it has no key for.
    """
    return encode_request(
        plan=None if plan is None else plan.to_wire(),
        files=dict(files),
        tests=tuple(tests),
        probe_file=probe_file,
        probes=tuple(probes),
        limits=dict(limits),
        keys=dict(keys or {}),
        strict=bool(strict),
        frame_key=bytes(frame_key),
    )


HEADER = struct.Struct("<cdQ")
"""Control message: b"R", the wall timeout in seconds and the run's number, which names its
folder (``run-N`` in the helper's base folder), plus three fds.

The others are b"C" and a marshalled list of (file key, pyc) for the helper to keep (see
memimport.learn_bytecode), and b"G" and a marshalled list of generated-code texts (see
codegen.learn)."""

DONE = struct.Struct("<cQ")
"""Control message: b"D" and a run's number: the caller has heard the run's end frame, so
whatever is left of the run is killed (a run cannot hold its slot past what it reported)."""

CONTROL_MAX = 1 << 16
"""Largest control message; the client splits its pycs to fit."""

DEFAULT_PRELOAD = (
    "abc", "argparse", "array", "ast", "asyncio", "base64", "binascii", "bisect", "calendar",
    "collections", "collections.abc", "concurrent.futures", "contextlib", "copy", "csv",
    "dataclasses", "datetime", "decimal", "difflib", "email.parser", "enum", "fnmatch",
    "fractions", "functools", "glob", "hashlib", "heapq", "hmac", "html", "http",
    "http.client", "http.server", "inspect", "io", "ipaddress", "itertools", "json",
    "logging", "math", "numbers", "operator", "pathlib", "pickle", "pprint", "queue",
    "random", "re", "secrets", "shlex", "shutil", "sqlite3", "statistics", "string",
    "struct", "tempfile", "textwrap", "threading", "time", "traceback", "types", "typing",
    "unittest", "unittest.mock", "urllib.error", "urllib.parse", "urllib.request", "uuid",
    "warnings", "weakref", "zlib", "zoneinfo",
)  # fmt: skip
"""Imported by the helper before it forks: a run pays nothing for these. Services' code and
tests reach for the HTTP ones (urllib.request alone costs about 10 ms to import)."""


def _mac(key: bytes, seq: int, payload: bytes) -> bytes:
    # keyed BLAKE2b: one C call, no hmac wrapper; the sequence number stops replay and reordering
    return hashlib.blake2b(seq.to_bytes(8, "big") + payload, key=key, digest_size=MAC_SIZE).digest()


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to a blocking descriptor."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def read_exact(fd: int, size: int) -> bytes:
    """Read exactly ``size`` bytes from a blocking descriptor.

    Raises:
        EOFError: if the descriptor closes first.
    """
    chunks: list[bytes] = []
    remaining = size
    while remaining:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            raise EOFError(f"descriptor closed with {remaining} of {size} bytes unread")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


class FrameWriter:
    """Sends messages from the child; each carries a MAC over its sequence number."""

    __slots__ = ("_fd", "_key", "_seq")

    def __init__(self, fd: int, key: bytes) -> None:
        self._fd = fd
        self._key = key
        self._seq = 0

    def send(self, message: dict[str, Any]) -> None:
        """Encode and write one message; blocks until the supervisor has room for it."""
        payload = json.dumps(message, separators=(",", ":")).encode("ascii")
        if len(payload) > MAX_FRAME:
            payload = json.dumps({"t": "oversize", "k": str(message.get("t"))}).encode("ascii")
        mac = _mac(self._key, self._seq, payload)
        self._seq += 1
        write_all(self._fd, _HEADER.pack(len(payload)) + mac + payload)


class FrameReader:
    """Reassembles and authenticates messages on the supervisor's side."""

    __slots__ = ("_buffer", "_key", "_seq")

    def __init__(self, key: bytes) -> None:
        self._key = key
        self._seq = 0
        self._buffer = bytearray()

    @property
    def pending(self) -> int:
        """Bytes received that do not yet form a whole frame."""
        return len(self._buffer)

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        """Add received bytes and return the messages they complete.

        Raises:
            TamperError: if a frame is oversized, fails its MAC, or is not a JSON object.
        """
        self._buffer += data
        messages: list[dict[str, Any]] = []
        head = _HEADER.size + MAC_SIZE
        while len(self._buffer) >= head:
            (size,) = _HEADER.unpack_from(self._buffer)
            if size > MAX_FRAME:
                raise TamperError(f"frame of {size} bytes exceeds {MAX_FRAME}")
            if len(self._buffer) < head + size:
                break
            mac = bytes(self._buffer[_HEADER.size : head])
            payload = bytes(self._buffer[head : head + size])
            del self._buffer[: head + size]
            if mac != _mac(self._key, self._seq, payload):
                raise TamperError(f"frame {self._seq} failed authentication")
            self._seq += 1
            try:
                message = json.loads(payload)
            except ValueError as exc:
                raise TamperError(f"frame {self._seq - 1} is not JSON: {exc}") from None
            if not isinstance(message, dict):
                raise TamperError(f"frame {self._seq - 1} is not a JSON object")
            messages.append(message)
        return messages
