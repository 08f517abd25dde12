"""CachingRunner: memoises reports by the content of the files, so identical states never rerun."""

from __future__ import annotations

import dataclasses
import hashlib
import threading
from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import Future
from types import TracebackType

from ..lru import Lru
from ._caller import check_request
from .contract import TestRunner
from .limits import SandboxLimits
from .report import RunReport

__all__ = ["CachingRunner", "cache_key"]

_CACHEABLE = frozenset({"completed", "collection_error", "sandbox_violation"})
"""Statuses that depend only on the inputs; timeouts and crashes can depend on machine load."""

_DEFAULT_LIMITS = SandboxLimits()


def cache_key(
    files: Mapping[str, bytes], test_files: Sequence[str], limits: SandboxLimits
) -> bytes:
    """Return the SHA-256 over sorted (path, content), the test files and the limits."""
    digest = hashlib.sha256(b"metasre-sandbox-cache-v1\0")
    for path in sorted(files):
        content = files[path]
        encoded = path.encode()
        digest.update(len(encoded).to_bytes(8, "big") + encoded)
        digest.update(len(content).to_bytes(8, "big"))
        digest.update(content)
    digest.update(len(test_files).to_bytes(8, "big"))
    for test_file in test_files:
        encoded = test_file.encode()
        digest.update(len(encoded).to_bytes(8, "big") + encoded)
    digest.update(repr(limits.to_wire()).encode())
    return digest.digest()


class CachingRunner:
    """Wraps a TestRunner with an LRU cache of reports keyed by ``cache_key``.

    Cached reports come back with ``cached=True``. Identical requests that arrive while the
    first is still running wait for it rather than running twice. Only reports whose status
    is a function of the inputs (completed, collection_error, sandbox_violation) are kept.

    Args:
        inner: The runner doing the work; close() closes it too.
        max_entries: Reports kept before the least recently used is dropped.
    """

    def __init__(self, inner: TestRunner, *, max_entries: int = 1024) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be >= 1, got {max_entries}")
        self._inner = inner
        self._max_entries = max_entries
        self._lock = threading.Lock()
        # reports are frozen, so the cached=True copy is built once and shared
        self._reports: Lru[bytes, RunReport] = Lru(max_entries)
        self._in_flight: dict[bytes, Future[RunReport]] = {}
        self._hits = 0
        self._misses = 0

    @property
    def inner(self) -> TestRunner:
        """The wrapped runner."""
        return self._inner

    @property
    def hits(self) -> int:
        """Runs answered from the cache (or by waiting for an identical run in flight)."""
        return self._hits

    @property
    def misses(self) -> int:
        """Runs passed to the wrapped runner."""
        return self._misses

    def __len__(self) -> int:
        return len(self._reports)

    def __enter__(self) -> CachingRunner:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def run(
        self,
        files: Mapping[str, bytes],
        test_files: Sequence[str],
        *,
        limits: SandboxLimits | None = None,
        shared: Collection[str] = (),
    ) -> RunReport:
        """Return the cached report for this exact request, or run it and cache the result.

        Args:
            files: Normalised relative POSIX paths mapped to their content.
            test_files: Keys of ``files`` to run as test modules, in order.
            limits: Resource limits; part of the cache key.
            shared: Passed on (see TestRunner.run); not part of the key, as it changes no
                report.

        Returns:
            The report, with ``cached=True`` when it was not run for this call.

        Raises:
            InvalidRunRequestError: if a path is not normalised or a test file is missing.
        """
        limits = limits or _DEFAULT_LIMITS
        try:
            key = cache_key(files, test_files, limits)
        except (TypeError, AttributeError):
            check_request(files, test_files)  # names the offending path or content
            raise
        with self._lock:
            report = self._reports.get(key)
            if report is not None:
                # a hit was validated when it first ran: the key covers every input
                self._hits += 1
                return report
            waiting = self._in_flight.get(key)
            if waiting is None:
                future: Future[RunReport] = Future()
                self._in_flight[key] = future
                self._misses += 1
            else:
                self._hits += 1
        if waiting is not None:
            return dataclasses.replace(waiting.result(), cached=True)
        try:
            check_request(files, test_files)
            report = self._inner.run(files, test_files, limits=limits, shared=shared)
        except BaseException as exc:
            with self._lock:
                del self._in_flight[key]
            future.set_exception(exc)
            raise
        with self._lock:
            del self._in_flight[key]
            if report.status in _CACHEABLE:
                self._reports.put(key, dataclasses.replace(report, cached=True))
        future.set_result(report)
        return report

    def clear(self) -> None:
        """Forget every cached report."""
        with self._lock:
            self._reports.clear()

    def close(self) -> None:
        """Close the wrapped runner; the cache stays readable but new runs will fail."""
        self._inner.close()
