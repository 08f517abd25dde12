"""An import finder serving the run's own modules from memory, bypassing the file system.

Stdlib only (runs inside the sandboxed child). The files are on disk too (tests may read
them), but finding a module through the path finder costs stat and listdir calls, audit
events and a pyc read per module; this finder answers from the request instead, with the
pyc shipped by the caller. It declines, leaving the path finder in charge, whenever the
answer could differ from what the path finder would find: namespace packages, modules
outside the run folder, and any file the tests have written, renamed or removed since.
"""

from __future__ import annotations

import _imp
import importlib.abc
import importlib.machinery
import importlib.util
import marshal
import sys
import types
from collections.abc import Iterable, Mapping, Sequence

__all__ = ["RunModuleFinder", "keep_only", "learn_bytecode"]

_PYC_HEADER = 16
_MAX_LEARNED_BYTES = 32 * 2**20

# file key -> its code object, filled in the fork server from pycs its own client compiled
# (never from a child) and inherited by every child forked afterwards: unmarshalling the
# unchanged modules of a service was about a tenth of a small suite's run time. A child
# keeps only the entries of its own files' keys (keep_only) before its tests run.
_learned: dict[bytes, types.CodeType] = {}
_learned_sizes: dict[bytes, int] = {}
_learned_bytes = 0


def keep_only(keys: Iterable[bytes]) -> object:
    """In a child, before its tests run: keep the code of these keys (its own files').

    Returns:
        The tables left behind, for the caller to abandon without freeing them.
    """
    global _learned, _learned_sizes
    mine = {key: code for key in keys if (code := _learned.get(key)) is not None}
    dropped = (_learned, _learned_sizes)
    _learned, _learned_sizes = mine, {}
    return dropped


def learn_bytecode(lessons: Sequence[tuple[bytes, bytes]]) -> int:
    """Unmarshal (file key, pyc) pairs from the trusted caller once, for later children.

    Returns:
        How many were new.
    """
    global _learned_bytes
    added = 0
    for key, pyc in lessons:
        if key in _learned or pyc[:4] != importlib.util.MAGIC_NUMBER:
            continue
        code = marshal.loads(memoryview(pyc)[_PYC_HEADER:])
        if isinstance(code, types.CodeType):
            _learned[key] = code
            _learned_sizes[key] = len(pyc)
            _learned_bytes += len(pyc)
            added += 1
    while _learned_bytes > _MAX_LEARNED_BYTES and _learned:
        oldest = next(iter(_learned))
        del _learned[oldest]
        _learned_bytes -= _learned_sizes.pop(oldest)
    return added


class RunModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """A meta path finder and loader for the ``.py`` files materialised in the run folder."""

    def __init__(
        self, run_dir: str, files: Mapping[str, bytes], keys: Mapping[str, bytes] | None = None
    ) -> None:
        """Create the finder.

        Args:
            run_dir: The run folder.
            files: The request's files, relative paths to content (pycs included).
            keys: The sources' keys, under which the fork server may hold their code.
        """
        self._run_dir = run_dir
        self._files = files
        self._keys = keys or {}
        dirs: set[str] = set()
        for path in files:
            parent = path.rpartition("/")[0]
            while parent and parent not in dirs:
                dirs.add(parent)
                parent = parent.rpartition("/")[0]
        self._dirs = frozenset(dirs)
        self._stale = False

    def touched(self, event: str, absolute: str) -> None:
        """Hear about a change the tests made in the run folder (from the audit hook).

        A change that could alter what an import finds (a Python file, a folder, a rename)
        retires this finder for the rest of the run: the path finder then reads the disk.
        """
        if self._stale:
            return
        relative = absolute[len(self._run_dir) + 1 :]
        if (
            event != "open"
            or relative in self._files
            or relative in self._dirs
            or relative.endswith((".py", ".pyc", ".pyw", ".so"))
        ):
            self._stale = True

    def _relative(self, entry: str) -> str | None:
        if entry == self._run_dir:
            return ""
        if entry.startswith(self._run_dir + "/"):
            return entry[len(self._run_dir) + 1 :] + "/"
        return None

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: types.ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        """Return a spec for a run-folder module, or None to let the path finder decide."""
        if self._stale:
            return None
        tail = fullname.rpartition(".")[2]
        for entry in sys.path if path is None else path:
            prefix = self._relative(entry)
            if prefix is None:
                return None  # the module would come from elsewhere: not ours to decide
            base = prefix + tail
            if base + "/__init__.py" in self._files:
                return self._spec(fullname, base + "/__init__.py", base)
            if base in self._dirs:
                return None  # a namespace portion: the path finder builds those
            if base + ".py" in self._files:
                return self._spec(fullname, base + ".py", None)
        return None

    def _spec(
        self, fullname: str, relative: str, package_dir: str | None
    ) -> importlib.machinery.ModuleSpec | None:
        origin = self._run_dir + "/" + relative
        spec = importlib.machinery.ModuleSpec(
            fullname, self, origin=origin, is_package=package_dir is not None
        )
        if package_dir is not None:
            spec.submodule_search_locations = [self._run_dir + "/" + package_dir]
        spec.has_location = True
        return spec

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        """Use the default module creation."""
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        """Run the module's code: the shipped pyc when there is one, else the source."""
        spec = module.__spec__
        assert spec is not None and spec.origin is not None
        exec(self._code(spec.origin), module.__dict__)

    def _code(self, origin: str) -> types.CodeType:
        relative = origin[len(self._run_dir) + 1 :]
        key = self._keys.get(relative)
        code: object = None if key is None else _learned.get(key)
        if code is None:
            pyc = self._files.get(importlib.util.cache_from_source(relative))
            if pyc is not None and pyc[:4] == importlib.util.MAGIC_NUMBER:
                code = marshal.loads(memoryview(pyc)[_PYC_HEADER:])
        if not isinstance(code, types.CodeType):
            return compile(self._files[relative], origin, "exec", dont_inherit=True)
        # what the path finder does to a pyc: point co_filename at the real file
        _imp._fix_co_filename(code, origin)  # type: ignore[attr-defined]  # no stub
        return code

    def get_source(self, fullname: str) -> str | None:
        """Return the module's source text (for linecache and inspect)."""
        module = sys.modules.get(fullname)
        spec = getattr(module, "__spec__", None)
        if spec is None or spec.origin is None:
            return None
        content = self._files.get(spec.origin[len(self._run_dir) + 1 :])
        return None if content is None else importlib.util.decode_source(content)

    def is_package(self, fullname: str) -> bool:
        """Return True for packages."""
        module = sys.modules.get(fullname)
        return module is not None and hasattr(module, "__path__")
