"""Resource limits applied to every sandboxed test run."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SandboxLimits"]


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """Limits for one sandboxed run; each maps to an rlimit or to the parent's watchdog.

    Raises:
        ValueError: if a limit is not positive.
    """

    cpu_seconds: int = 2
    """CPU time of the test process (RLIMIT_CPU); past it the run ends with status timeout."""

    memory_bytes: int = 512 * 2**20
    """Address space of the test process (RLIMIT_AS); past it allocations raise MemoryError."""

    max_processes: int = 32
    """Processes and threads of the run's private uid (RLIMIT_NPROC, applied when root)."""

    max_file_bytes: int = 2**20
    """Largest file the tests may write (RLIMIT_FSIZE); bigger writes fail with EFBIG."""

    wall_timeout_s: float = 5.0
    """Wall-clock budget; the parent kills the run's process group after it."""

    max_open_files: int = 256
    """Open file descriptors of the test process (RLIMIT_NOFILE)."""

    def __post_init__(self) -> None:
        for name in ("cpu_seconds", "memory_bytes", "max_processes", "max_file_bytes"):
            value = getattr(self, name)
            if not isinstance(value, int) or value <= 0:
                raise ValueError(f"SandboxLimits.{name} must be a positive int, got {value!r}")
        if not self.wall_timeout_s > 0:
            raise ValueError(
                f"SandboxLimits.wall_timeout_s must be > 0 seconds, got {self.wall_timeout_s!r}"
            )
        if not isinstance(self.max_open_files, int) or self.max_open_files < 16:
            raise ValueError(
                "SandboxLimits.max_open_files must be an int >= 16 (the runner itself needs a"
                f" few), got {self.max_open_files!r}"
            )

    def to_wire(self) -> dict[str, int | float]:
        """Return the limits by name, as plain values for the helper (stdlib-only side)."""
        return {
            "cpu_seconds": self.cpu_seconds,
            "memory_bytes": self.memory_bytes,
            "max_processes": self.max_processes,
            "max_file_bytes": self.max_file_bytes,
            "wall_timeout_s": float(self.wall_timeout_s),
            "max_open_files": self.max_open_files,
        }
