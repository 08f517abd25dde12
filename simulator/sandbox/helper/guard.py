"""The in-process layer of the sandbox: an audit hook that refuses escapes and reports them.

Stdlib only (runs inside the sandboxed child). It is installed right before the test modules
are imported, after the OS layers (Landlock, seccomp, rlimits, and as root a uid and
namespaces) are in place; it turns an attempted escape into a clear message rather than a bare
EACCES. It is not a boundary of its own (PEP 578 hooks are not a sandbox): the kernel layers
are, and a run refuses to start without them unless weak isolation was explicitly allowed.
"""

from __future__ import annotations

import os
import pathlib
import socket
import sys
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["SandboxViolation", "install_guard", "violation_texts"]

Report = Callable[[str, str], None]
"""Called with (kind, detail) for every refused action, before the exception is raised."""

Changed = Callable[[str, str], None]
"""Called with (event, real path) for every allowed change inside the run folder."""

_ADDRESS_EVENTS = frozenset({"socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg"})
"""Socket events whose second argument is the peer or local address."""
_NETWORK_EVENTS = frozenset(
    {
        "socket.getaddrinfo",
        "socket.gethostbyname",
        "socket.gethostbyname_ex",
        "socket.gethostbyaddr",
        "socket.getnameinfo",
        "socket.sethostname",
        "urllib.Request",
        "http.client.connect",
        "ftplib.connect",
        "smtplib.connect",
        "imaplib.open",
        "poplib.connect",
        "nntplib.connect",
        "telnetlib.Telnet.open",
        "syslog.openlog",
        "syslog.syslog",
    }
)
_PROCESS_EVENTS = frozenset(
    {
        "subprocess.Popen",
        "os.system",
        "os.exec",
        "os.spawn",
        "os.posix_spawn",
        "os.fork",
        "os.forkpty",
        "os.startfile",
        "pty.spawn",
        "webbrowser.open",
    }
)
_SIGNAL_EVENTS = frozenset({"os.kill", "os.killpg", "signal.pthread_kill"})
_INTROSPECTION_EVENTS = frozenset({"gc.get_objects", "gc.get_referrers", "gc.get_referents"})
_LINK_EVENTS = frozenset({"os.symlink", "os.link"})
_WRITE_PATH_EVENTS = frozenset(
    {
        "os.mkdir",
        "os.rmdir",
        "os.remove",
        "os.truncate",
        "os.chmod",
        "os.chown",
        "os.utime",
        "os.chflags",
        "os.lchflags",
        "os.setxattr",
        "os.removexattr",
        "os.mkfifo",
        "os.mknod",
        "shutil.rmtree",
    }
)
_READ_PATH_EVENTS = frozenset({"os.listdir", "os.scandir", "os.listxattr", "os.getxattr"})
_FORBIDDEN_IMPORTS = frozenset({"_posixsubprocess"})
_PACKAGES = "-packages/"
"""site-packages and dist-packages: installed packages (ours with its scenarios) are not the
standard library, even under its folder."""
_SQLITE_ATTACH = 24
_SQLITE_OK = 0
_SQLITE_DENY = 1
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_SAFE_PATH_TYPES: tuple[type, ...] = (str, bytes, pathlib.PurePosixPath, pathlib.PosixPath)
_DEVICES_READ = frozenset({"/dev/null", "/dev/zero", "/dev/urandom", "/dev/random"})
_DEVICES_WRITE = frozenset({"/dev/null"})

_KIND_TEXT = {
    "network": ("network access is not allowed", "tried to open a network connection"),
    "process": ("starting processes is not allowed", "tried to start a process"),
    "signal": ("signalling other processes is not allowed", "tried to signal another process"),
    "ctypes": ("ctypes is not allowed", "tried to use ctypes"),
    "introspection": (
        "inspecting the runner's objects is not allowed",
        "tried to walk the interpreter's objects",
    ),
    "link": ("creating links is not allowed", "tried to create a link"),
    "write": (
        "writing outside the run folder is not allowed",
        "tried to write outside the run folder",
    ),
    "read": (
        "reading outside the run folder and the standard library is not allowed",
        "tried to read outside the run folder and the standard library",
    ),
    "path": ("only str, bytes and pathlib paths are accepted", "passed an unsupported path"),
}


class SandboxViolation(PermissionError):
    """Raised inside the tests when they attempt something the sandbox forbids."""


def violation_texts(kind: str, detail: str) -> tuple[str, str]:
    """Return (exception text, report text) for a refusal of ``kind`` with ``detail``."""
    short, verb = _KIND_TEXT[kind]
    return f"sandbox: {short} ({detail})", f"the tests {verb} ({detail}), which the sandbox forbids"


def install_guard(
    run_dir: str, read_roots: Sequence[str], report: Report, changed: Changed | None = None
) -> None:
    """Install the audit hook for the rest of this process's life (hooks cannot be removed).

    Args:
        run_dir: Absolute real path of the run folder: the only writable place.
        read_roots: Absolute real paths readable besides the run folder (standard library).
        report: Receives (kind, detail) for each refusal, e.g. to send it to the supervisor.
        changed: Receives (event, path) for each allowed write inside the run folder.
    """
    run_prefix = run_dir.rstrip("/") + "/"
    roots = tuple(r.rstrip("/") + "/" for r in read_roots)
    me = os.getpid()
    getcwd = os.getcwd
    normpath = os.path.normpath
    realpath = os.path.realpath
    fsdecode = os.fsdecode
    join = os.path.join
    split = os.path.split
    islink = os.path.islink
    af_unix = socket.AF_UNIX
    direntry = os.DirEntry

    def refuse(kind: str, detail: str) -> None:
        report(kind, detail)
        raise SandboxViolation(violation_texts(kind, detail)[0])

    def as_text(path: Any) -> str | None:
        if path is None or isinstance(path, int):
            return None
        if type(path) is direntry:
            return str(path.path) if isinstance(path.path, str) else fsdecode(path.path)
        if type(path) not in _SAFE_PATH_TYPES:
            # a custom __fspath__ could answer differently to us and to the real call
            refuse("path", f"{type(path).__name__} object")
        return fsdecode(os.fspath(path))

    real_dirs: dict[str, str] = {}

    def resolve(text: str) -> tuple[str, bool]:
        """Return (real absolute path, whether it is inside the run folder)."""
        absolute = normpath(join(getcwd(), text))
        # links cannot be created in the run folder, so there a normalised path is real
        if absolute == run_dir or absolute.startswith(run_prefix):
            return absolute, True
        # folders outside the run folder cannot change under the tests: resolve each once
        head, tail = split(absolute)
        real_head = real_dirs.get(head)
        if real_head is None:
            real_head = real_dirs[head] = realpath(head)
        real = join(real_head, tail) if tail else real_head
        if tail and islink(real):
            real = realpath(real)
        return real, real == run_dir or real.startswith(run_prefix)

    def check_read(path: Any) -> None:
        text = as_text(path)
        if text is None:
            return
        real, inside = resolve(text)
        if inside or real in _DEVICES_READ:
            return
        if real.startswith("/proc/") or real == "/proc" or _PACKAGES in real + "/":
            refuse("read", real)
        for root in roots:
            if real.startswith(root) or real + "/" == root:
                return
        refuse("read", real)

    def check_write(path: Any, event: str = "open") -> None:
        text = as_text(path)
        if text is None:
            return
        real, inside = resolve(text)
        if inside:
            if changed is not None:
                changed(event, real)
            return
        if real in _DEVICES_WRITE:
            return
        refuse("write", real)

    def on_open(args: tuple[Any, ...]) -> None:
        path, mode, flags = (*args, None, None, None)[:3]
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and bool(flags & _WRITE_FLAGS)
        )
        if writing:
            check_write(path)
        else:
            check_read(path)

    def no_attach(action: int, arg1: Any, *_rest: Any) -> int:
        if action == _SQLITE_ATTACH:
            report("read", f"sqlite3 ATTACH {arg1!r}")
            return _SQLITE_DENY
        return _SQLITE_OK

    def hook(event: str, args: tuple[Any, ...]) -> None:
        try:
            decide(event, args)
        except SandboxViolation:
            raise
        except Exception:
            # an event raised by hand with odd arguments (sys.audit is public): refuse it
            # rather than let a stray error unwind through here
            refuse("path", f"{event} with unexpected arguments")

    def decide(event: str, args: tuple[Any, ...]) -> None:
        if event == "open":
            on_open(args)
        elif event in _READ_PATH_EVENTS:
            check_read(args[0] if args and args[0] is not None else ".")
        elif event in _WRITE_PATH_EVENTS:
            check_write(args[0] if args else None, event)
        elif event == "os.rename":
            check_write(args[0], event)
            check_write(args[1], event)
        elif event == "socket.__new__":
            if len(args) > 1 and args[1] != af_unix:
                refuse("network", f"socket(family={args[1]})")
        elif event in _ADDRESS_EVENTS:
            address = args[1] if len(args) > 1 else None
            if not (event == "socket.sendmsg" and address is None):
                refuse("network", f"{event} to {address!r}")
        elif event in _NETWORK_EVENTS:
            refuse("network", f"{event} {args[0]!r}" if args else event)
        elif event in _PROCESS_EVENTS:
            refuse("process", event)
        elif event in _SIGNAL_EVENTS:
            if not (event == "os.kill" and args and args[0] in (0, me)):
                refuse("signal", f"{event}{args!r}")
        elif event.startswith("ctypes."):
            refuse("ctypes", event)
        elif event in _INTROSPECTION_EVENTS:
            refuse("introspection", event)
        elif event in _LINK_EVENTS:
            refuse("link", f"{event} {args[0]!r} -> {args[1]!r}")
        elif event == "import":
            if args and args[0] in _FORBIDDEN_IMPORTS:
                refuse("process", f"import {args[0]}")
        elif event == "sqlite3.connect":
            database = args[0] if args else None
            text = as_text(database)
            if text is not None and text.lower().startswith("file:"):
                # a URI names any file, whatever the folder; Landlock stops it too
                refuse("read", f"sqlite3 URI {text!r}")
            if database not in (":memory:", "", b":memory:", b""):
                check_write(database)

        elif event in ("sqlite3.enable_load_extension", "sqlite3.load_extension"):
            refuse("ctypes", event)
        elif event == "resource.prlimit" and args and args[0] not in (0, me):
            refuse("signal", f"resource.prlimit on pid {args[0]}")

    sys.addaudithook(hook)
    sqlite3 = sys.modules.get("sqlite3")
    if sqlite3 is not None:
        # ATTACH opens a database by name from inside SQLite, with no audit event, and the
        # connect/handle event comes before the connection can take an authorizer: refuse it
        # on every connection made the usual way (Landlock refuses it whatever the way)
        real_connect = sqlite3.connect

        def connect(*args: Any, **kwargs: Any) -> Any:
            connection = real_connect(*args, **kwargs)
            connection.set_authorizer(no_attach)
            return connection

        sqlite3.connect = connect  # type: ignore[attr-defined]  # sys.modules gives a bare ModuleType
        dbapi2 = getattr(sqlite3, "dbapi2", None)
        if dbapi2 is not None:
            dbapi2.connect = connect
