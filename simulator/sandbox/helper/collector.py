"""The supervisor's view of one run: authenticated messages and output in, a verdict out.

Stdlib only: used by the fork server and by SubprocessRunner in the caller's process.
"""

from __future__ import annotations

import os
import signal
from typing import Any

from .protocol import EXIT_SETUP_FAILED, FrameReader, TamperError, clean_text

__all__ = ["OUTPUT_HEAD", "OUTPUT_TAIL", "RunCollector"]

OUTPUT_HEAD = 6000
"""Bytes of output kept from the start."""

OUTPUT_TAIL = 2000
"""Bytes of output kept from the end, after an omission marker."""

_OUTCOME_STATUSES = frozenset({"passed", "failed", "error"})
_TAMPERED = "the tests wrote to the sandbox's private report channel, which the sandbox forbids"


class RunCollector:
    """Accumulates one child's report frames and output, then decides the run's status."""

    def __init__(self, key: bytes, run_dir: str, wall_timeout_s: float, cpu_seconds: float) -> None:
        self._reader = FrameReader(key)
        self._run_dir = run_dir
        self._wall = wall_timeout_s
        self._cpu = cpu_seconds
        self._head = bytearray()
        self._tail = bytearray()
        self._total = 0
        self.tampered = False
        self.current: str | None = None
        self.outcomes: list[list[str]] = []
        self.violations: list[str] = []
        self.collection_notes: list[str] = []
        self.end: dict[str, Any] | None = None
        self.observations: dict[str, str] = {}
        """Probe id -> the JSON text the child said its probe returned (a grader run)."""
        self.codegen: list[Any] = []
        """Generated-code texts the child compiled itself (see _codegen), for the helper."""

    def feed_output(self, data: bytes) -> None:
        """Keep the head and the tail of the output; drop the middle."""
        self._total += len(data)
        room = OUTPUT_HEAD - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if data:
            self._tail += data[-OUTPUT_TAIL:]
            if len(self._tail) > OUTPUT_TAIL:
                del self._tail[: len(self._tail) - OUTPUT_TAIL]

    def feed_report(self, data: bytes) -> None:
        """Parse report bytes; a frame that fails authentication marks the run tampered."""
        if self.tampered:
            return
        try:
            messages = self._reader.feed(data)
        except TamperError:
            self.tampered = True
            return
        for message in messages:
            self._handle(message)

    def _handle(self, message: dict[str, Any]) -> None:
        kind = message.get("t")
        if kind == "collect":
            self.current = f"importing {message.get('file')}"
        elif kind == "start":
            self.current = str(message.get("id"))
        elif kind == "outcome":
            status = message.get("status")
            self.outcomes.append(
                [
                    str(message.get("id")),
                    status if status in _OUTCOME_STATUSES else "error",
                    str(message.get("message", "")),
                    str(message.get("tb", "")),
                ]
            )
            self.current = None
        elif kind == "collection_error":
            self.collection_notes.append(
                f"[collection error in {message.get('file')}]\n{message.get('tb', '')}"
            )
        elif kind == "violation":
            self.violations.append(str(message.get("message")))
        elif kind == "end":
            self.end = message
            self.current = None
        elif kind == "observation":
            probe, value = message.get("id"), message.get("value")
            if isinstance(probe, str) and isinstance(value, str) and probe not in self.observations:
                self.observations[probe] = value
            self.current = None
        elif kind == "codegen" and not self.codegen:
            texts = message.get("texts")
            if isinstance(texts, list):
                self.codegen = texts

    def output_text(self) -> str:
        """Return the kept output as text, with run-folder paths made relative."""
        text = bytes(self._head).decode("utf-8", "replace")
        omitted = self._total - len(self._head) - len(self._tail)
        if omitted > 0:
            text += f"\n[... {omitted} bytes of output omitted ...]\n"
        text += bytes(self._tail).decode("utf-8", "replace")
        if self.collection_notes:
            text += ("\n" if text and not text.endswith("\n") else "") + "\n".join(
                self.collection_notes
            )
        return text.replace(self._run_dir + "/", "").replace(self._run_dir, ".")

    def _while(self) -> str:
        if self.current is None:
            return ""
        if self.current.startswith("importing "):
            return f" while {self.current}"
        return f" while running {self.current}"

    def _verdict(
        self, wait_status: int | None, cpu_time: float, timed_out: bool
    ) -> tuple[str, str]:
        if self.tampered:
            return (
                "sandbox_violation",
                _TAMPERED,
            )
        if self.violations:
            more = len(self.violations) - 1
            suffix = f" (and {more} more refused actions)" if more > 0 else ""
            return "sandbox_violation", self.violations[0] + suffix
        if timed_out:
            return (
                "timeout",
                f"tests ran past the {self._wall:g} s wall limit and were stopped{self._while()}",
            )
        end = self.end
        if end is not None and end.get("status") in ("completed", "collection_error"):
            if end["status"] == "completed":
                return "completed", ""
            return "collection_error", clean_text(str(end.get("message", "")), 1000)
        if end is not None and end.get("status") == "setup_error":
            return "crashed", clean_text(str(end.get("message", "")), 1000)
        return self._died(wait_status, cpu_time)

    def _died(self, wait_status: int | None, cpu_time: float) -> tuple[str, str]:
        if wait_status is None:
            return "crashed", f"the test process vanished{self._while()}"
        if os.WIFSIGNALED(wait_status):
            number = os.WTERMSIG(wait_status)
            if number == signal.SIGXCPU or (number == signal.SIGKILL and cpu_time >= self._cpu):
                return (
                    "timeout",
                    f"tests used more than {self._cpu:g} s of CPU time and were stopped"
                    f"{self._while()}",
                )
            try:
                name = signal.Signals(number).name
            except ValueError:
                name = f"signal {number}"
            hint = " (likely out of memory)" if number == signal.SIGKILL else ""
            return "crashed", f"the test process was killed by {name}{hint}{self._while()}"
        code = os.waitstatus_to_exitcode(wait_status)
        if code == EXIT_SETUP_FAILED and self.end is None and not self.outcomes:
            return "crashed", "the sandbox could not start the run (setup failed before reporting)"
        return (
            "crashed",
            f"the test process exited with code {code} before reporting its results{self._while()}",
        )

    def finish(self, wait_status: int | None, cpu_time: float, timed_out: bool) -> dict[str, Any]:
        """Return the response for the client once the child is gone.

        Args:
            wait_status: Raw status from wait4, or None if the child could not be reaped.
            cpu_time: User plus system CPU seconds the child used.
            timed_out: True when the supervisor killed the child at the wall deadline.
        """
        status, message = self._verdict(wait_status, cpu_time, timed_out)
        if self._reader.pending and status == "completed":
            status, message = (
                "sandbox_violation",
                _TAMPERED,
            )
        return {
            "status": status,
            "message": message.replace(self._run_dir + "/", "").replace(self._run_dir, "."),
            "outcomes": self.outcomes,
            "observations": self.observations,
            "output": self.output_text(),
            "cpu_seconds": cpu_time,
        }
