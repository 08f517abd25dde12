"""One sandboxed run, inside its own process: isolate, materialise the files, run the tests.

Stdlib only. Entered either in a spare child forked ahead of time by the fork server
(``zygote``) or in a fresh interpreter started by SubprocessRunner (``main``). Whatever
happens, the process ends with ``os._exit`` so no inherited state (atexit hooks, buffers of
the parent) runs twice.

Order matters: read the request, keep only this run's part of the helper's caches, create the
run folder as root, drop to the run's uid, materialise the files as that uid, lower the
rlimits, install the seccomp filter (a spare of the fork server has it before its go message),
prepare the interpreter, fix its clocks and random streams, and only then install the audit
hook and import the tests.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import marshal
import os
import signal
import socket
import sys
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

from . import determinism, guard, isolation, landlock, minitest, probe, protocol, seccomp, warmup
from .accel import codegen, memimport
from .protocol import ChildPlan

__all__ = [
    "abandon",
    "main",
    "readable_roots",
    "remember_own_modules",
    "run_child",
    "stdlib_dirs",
    "without_packages",
    "zoneinfo_dirs",
    "zygote",
]

_ZONEINFO_DIRS = (
    "/usr/share/zoneinfo",
    "/usr/lib/zoneinfo",
    "/usr/share/lib/zoneinfo",
    "/etc/zoneinfo",
)
_HELPER_DIR = os.path.dirname(os.path.realpath(__file__))
_SYSTEM_READABLE = (
    "/etc/ld.so.cache",
    "/etc/localtime",
    "/dev/urandom",
    "/dev/random",
    "/dev/zero",
)
"""The loader's cache, the local time zone and the random devices."""


def _library_dirs() -> tuple[str, ...]:
    """Return the folders of shared libraries an extension module may load on first import.

    Nothing else of /usr/lib: it holds other programs' trees, and distro Python's packages.
    """
    import sysconfig

    arch = sysconfig.get_config_var("MULTIARCH") or ""
    multiarch = (f"/usr/lib/{arch}", f"/lib/{arch}") if arch else ("/usr/lib", "/lib")
    return (*multiarch, "/lib64", "/usr/lib64")


_DEVICES_READ_WRITE = ("/dev/null",)
_PACKAGE_FOLDERS = frozenset({"site-packages", "dist-packages"})
_readable_cache: tuple[str, ...] | None = None
_MAX_VIOLATION_FRAMES = 20
EXIT_SETUP_FAILED = protocol.EXIT_SETUP_FAILED

_stdlib_cache: tuple[str, ...] | None = None
_py_incref = ctypes.pythonapi.Py_IncRef  # looked up once, in the fork server
_zoneinfo_cache: tuple[str, ...] | None = None
_own_modules: tuple[str, ...] = ()


def stdlib_dirs() -> tuple[str, ...]:
    """Return the standard library directories: the whole sys.path of a ``-S -P`` helper.

    Computed once per process (the fork server computes it before forking), before the child
    replaces sys.path.
    """
    global _stdlib_cache
    if _stdlib_cache is None:
        _stdlib_cache = tuple(
            os.path.realpath(p)
            for p in sys.path
            if p and os.path.isdir(p) and os.path.realpath(p) != _HELPER_DIR
        )
    return _stdlib_cache


def zoneinfo_dirs() -> tuple[str, ...]:
    """Return the time zone folders this machine has (the tests may read them).

    Computed once per process (the fork server computes it before forking).
    """
    global _zoneinfo_cache
    if _zoneinfo_cache is None:
        _zoneinfo_cache = tuple(d for d in _ZONEINFO_DIRS if os.path.isdir(d))
    return _zoneinfo_cache


def remember_own_modules() -> None:
    """Record the sandbox's own module names (called by the fork server before forking)."""
    global _own_modules
    _own_modules = tuple(n for n in sys.modules if n.startswith("_metasre_sandbox"))


def _materialise(run_dir: str, files: Mapping[str, bytes]) -> None:
    made = {run_dir}
    for path, content in files.items():
        if path.endswith(".pyc") and "__pycache__/" in path:
            continue  # shipped for the in-memory finder; the folder looks like a checkout
        full = run_dir + "/" + path
        folder = full.rpartition("/")[0]
        if folder not in made:
            os.makedirs(folder, 0o700, exist_ok=True)
            made.add(folder)
        fd = os.open(full, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            protocol.write_all(fd, content)
        finally:
            os.close(fd)


def _keep_only_own_caches(run_dir: str, keys: Mapping[str, bytes]) -> None:
    """Drop what the fork server learned from other runs, keeping what this run's files need.

    The helper's caches hold code generated and compiled for every run it has seen; this run
    must see none of it but its own files'. What it must not see is abandoned (see abandon).
    """
    abandon((codegen.keep_only(run_dir, keys), memimport.keep_only(keys.values())))


def _isolate(plan: ChildPlan, strict: bool) -> None:
    uid = plan.uid
    if plan.new_namespaces and isolation.is_root():
        isolation.unshare(isolation.CLONE_NEWNET)
        if uid is not None and not all(isolation.traversable_by_others(p) for p in stdlib_dirs()):
            exposed = isolation.unshare(isolation.CLONE_NEWNS) and isolation.expose_to_others(
                stdlib_dirs(), plan.scratch_dir
            )
            if not exposed:
                uid = None  # the dropped uid could not import the standard library
    os.mkdir(plan.run_dir, 0o700)
    if uid is not None:
        try:
            os.chown(plan.run_dir, uid, uid)
            isolation.drop_privileges(uid)
        except PermissionError:
            # root without CAP_SETUID (a trimmed container): the helper announced this layer,
            # so a strict run stops rather than go on with less than the caller was told
            if strict:
                raise
        else:
            # a process left behind by an earlier run in this uid must not see this run's files
            isolation.kill_uid_processes()
    isolation.set_parent_death_signal()


def _prepare_interpreter(
    plan: ChildPlan, stdlib: tuple[str, ...], files: Mapping[str, bytes], test_files: Sequence[str]
) -> None:
    run_dir = plan.run_dir
    os.chdir(run_dir)
    tmp = run_dir + "/.tmp"
    os.mkdir(tmp, 0o700)
    os.environ.clear()
    os.environ["TMPDIR"] = tmp
    tempfile = sys.modules.get("tempfile")
    if tempfile is not None:
        tempfile.tempdir = tmp  # type: ignore[attr-defined]
    test_dirs: list[str] = []
    for path in test_files:
        folder = run_dir + "/" + path.rpartition("/")[0] if "/" in path else run_dir
        if folder not in test_dirs and folder != run_dir:
            test_dirs.append(folder)
    # stdlib finders stay cached from the helper's warm-up; only the new folders are scanned
    sys.path[:] = [run_dir, *test_dirs, *stdlib]
    # our own modules must not be importable by the tests, and the agent's top-level modules
    # shadow pre-imported standard modules of the same name, as they would in a fresh python.
    # Walking sys.modules would touch (and so copy) hundreds of pages in a forked child, so
    # the fork server lists its own modules once, before forking.
    own = _own_modules or tuple(n for n in sys.modules if n.startswith("_metasre_sandbox"))
    for name in own:
        sys.modules.pop(name, None)
    shadowed = {p.split("/", 1)[0].removesuffix(".py") for p in files}
    hits = {top for top in shadowed if top in sys.modules and top not in sys.builtin_module_names}
    if hits:
        for name in [n for n in sys.modules if n.split(".", 1)[0] in hits]:
            del sys.modules[name]
    # asyncio needs the subprocess module importable, but the primitive under it raises no
    # audit event: import it now, then cut the routes to it (the seccomp filter backs this up)
    import subprocess

    subprocess._posixsubprocess = None  # type: ignore[attr-defined]
    sys.modules.pop("_posixsubprocess", None)
    sys.dont_write_bytecode = True
    # the helper's command line carries its configuration (its purpose shows in it): every
    # run, visible, traffic or grader, sees the same one
    sys.argv[:] = ["-c"]
    sys.orig_argv[:] = ["python3", "-c"]


def _stdio() -> io.BufferedIOBase:
    # stdout and stderr share one buffer, so their interleaving survives
    buffer = io.BufferedWriter(io.FileIO(1, "w", closefd=False), 1 << 16)
    sys.stdout = io.TextIOWrapper(buffer, "utf-8", "backslashreplace", write_through=True)
    sys.stderr = io.TextIOWrapper(buffer, "utf-8", "backslashreplace", write_through=True)
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), "utf-8")
    return buffer


def _detach(keep: Sequence[int]) -> None:
    """Leave the helper's session and descriptors behind; stdin becomes /dev/null."""
    with contextlib.suppress(OSError):
        os.setsid()
    isolation.close_fds_except(keep)
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # oversized writes fail with EFBIG instead
    signal.signal(signal.SIGINT, signal.default_int_handler)


def run_child(plan: ChildPlan) -> NoReturn:
    """Run one request end to end in this (already forked) process; never returns."""
    try:
        _detach((plan.request_fd, plan.report_fd, plan.output_fd))
    except BaseException:
        os._exit(EXIT_SETUP_FAILED)
    _run_detached(plan)


def abandon(obj: object) -> None:
    """Keep ``obj`` alive for good, then drop every reference to it.

    In a forked child, freeing what the parent built would touch, and so copy, every page
    it occupies; nothing can reach an abandoned object (the audit hook refuses the gc calls
    that could).
    """
    _py_incref(ctypes.py_object(obj))


def zygote(go_fd: int, scratch_dir: str, rehearse: bool) -> NoReturn:
    """Wait, pre-forked and detached, for a run; then run it. Never returns.

    The fork server keeps a spare child or two parked here so that forking happens while
    the previous run executes instead of on the critical path of the next one. The go
    message carries the run's folder and uid (protocol.GO_FIELDS), plus three descriptors:
    the request socket and the write ends of the caller's report and output pipes.
    """
    try:
        _detach((go_fd,))
        # now rather than after the go message: the filter forbids nothing a spare does, and
        # a spare that has it spends less of the run's time setting up
        seccomp.forbid_new_processes()
        go = socket.socket(fileno=go_fd)
        if rehearse:
            _rehearse(go, scratch_dir)
            with contextlib.suppress(OSError):
                go.send(b"W")  # tells the server this spare is the one to pick first
        message, fds, _flags, _addr = socket.recv_fds(go, 4096, 3)
        go.close()
        if len(fds) != 3:
            os._exit(0)  # the server is gone or retired this spare
        go = marshal.loads(message)  # from our own helper, over a private socketpair
        plan = ChildPlan(request_fd=fds[0], report_fd=fds[1], output_fd=fds[2], **go)
    except BaseException:
        os._exit(EXIT_SETUP_FAILED)
    _run_detached(plan)


def _rehearse(go: socket.socket, scratch_dir: str) -> None:
    """While parked, rehearse a run so the pages a run dirties are copied now.

    Copy-on-write faults then happen off the critical path instead of one at a time during
    the real run. The rehearsal runs at SCHED_IDLE so it only uses otherwise idle CPU, and
    stops between steps if the server closes the go socket. The server hands runs only to
    spares that reported the rehearsal done, so a slow rehearsal never delays a run.
    """
    import select

    with contextlib.suppress(OSError, AttributeError):
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    with contextlib.suppress(Exception):
        warmup.warm_up(
            f"{scratch_dir}/zygote-{os.getpid()}",
            stdlib_dirs(),
            lambda: bool(select.select([go], [], [], 0)[0]),
        )
    with contextlib.suppress(OSError, AttributeError):
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))


def _run_detached(plan: ChildPlan) -> NoReturn:
    """Set the run up in this detached process, run the tests or probes, report, and exit."""
    writer: protocol.FrameWriter | None = None
    code = 0
    try:
        if plan.output_fd != 1:
            os.dup2(plan.output_fd, 1)
            os.close(plan.output_fd)
        os.dup2(1, 2)
        request = protocol.decode_request(plan.request_fd)
        os.close(plan.request_fd)
        if request["plan"] is not None:
            plan = ChildPlan(**request["plan"])
        strict = request["strict"]
        files = request["files"]
        writer = protocol.FrameWriter(plan.report_fd, request["frame_key"])
        _keep_only_own_caches(plan.run_dir, request["keys"])
        _isolate(plan, strict)
        _materialise(plan.run_dir, files)
        limits = request["limits"]
        isolation.apply_rlimits(
            cpu_seconds=limits["cpu_seconds"],
            memory_bytes=limits["memory_bytes"],
            max_processes=(
                limits["max_processes"]
                if plan.uid is not None and os.getuid() == plan.uid
                else None
            ),
            max_file_bytes=limits["max_file_bytes"],
            max_open_files=limits["max_open_files"],
        )
        if not seccomp.forbid_new_processes() and strict:
            raise isolation.IsolationError("the seccomp filter could not be installed")
        stdlib = stdlib_dirs()
        _confine(plan.run_dir, stdlib, strict)
        tests = request["tests"] or ((request["probe_file"],) if request["probe_file"] else ())
        _prepare_interpreter(plan, stdlib, files, tests)
        buffer = _stdio()
        _run(plan, stdlib, files, request, writer, buffer)
    except BaseException as exc:
        if writer is None:
            code = EXIT_SETUP_FAILED
        else:
            with contextlib.suppress(BaseException):
                writer.send(
                    {
                        "t": "end",
                        "status": "setup_error",
                        "message": protocol.clean_text(
                            f"the sandbox could not set up the run: {type(exc).__name__}: {exc}",
                            400,
                        ),
                    }
                )
    finally:
        os._exit(code)


def readable_roots(stdlib: Sequence[str]) -> tuple[str, ...]:
    """Return what a run may read besides its folder: the interpreter's own files.

    The standard library, the shared libraries its extension modules load on first import
    (the machine's library folder only), the time zone data, and this folder (the runner's
    source, so tracebacks through it show).
    None of these holds anything of a scenario, a session or the server. Installed packages
    do (an installed META-SRE carries its scenarios, hidden probes included), and they sit in
    ``site-packages`` *inside* the standard library's folder, so a standard library folder
    that holds one is granted entry by entry instead. Computed once per process (the fork
    server computes it before forking).
    """
    global _readable_cache
    if _readable_cache is None:
        granted = without_packages([*stdlib, *_library_dirs()])
        _readable_cache = (*granted, *zoneinfo_dirs(), *_SYSTEM_READABLE, _HELPER_DIR)
    return _readable_cache


def without_packages(folders: Sequence[str], depth: int = 2) -> list[str]:
    """Return ``folders``, splitting one that holds installed packages into its other entries.

    A folder holds them when it has a ``site-packages`` or ``dist-packages`` entry, or (within
    ``depth``) a ``python*`` folder that does (``/usr/lib64/python3.11/site-packages``).
    """
    granted: list[str] = []
    for folder in folders:
        if depth > 0 and _holds_packages(folder, depth):
            for name in sorted(os.listdir(folder)):
                if name not in _PACKAGE_FOLDERS:
                    granted += without_packages([f"{folder}/{name}"], depth - 1)
        elif os.path.exists(folder):
            granted.append(folder)
    return granted


def _holds_packages(folder: str, depth: int) -> bool:
    try:
        names = os.listdir(folder)
    except OSError:
        return False
    if any(name in _PACKAGE_FOLDERS for name in names):
        return True
    return depth > 1 and any(
        name.startswith("python") and _holds_packages(f"{folder}/{name}", depth - 1)
        for name in names
    )


def _confine(run_dir: str, stdlib: Sequence[str], strict: bool) -> None:
    """Apply Landlock: from here on the kernel itself keeps the run inside its folder."""
    try:
        landlock.restrict(run_dir, readable_roots(stdlib), _DEVICES_READ_WRITE)
    except OSError:
        if strict:
            raise


def _run(
    plan: ChildPlan,
    stdlib: tuple[str, ...],
    files: Mapping[str, bytes],
    request: Mapping[str, Any],
    writer: protocol.FrameWriter,
    buffer: io.BufferedIOBase,
) -> None:
    run_dir = plan.run_dir
    ours = (sys.stdout, sys.stderr)
    sent = 0

    def scrub(text: str) -> str:
        return text.replace(run_dir + "/", "").replace(run_dir, ".")

    def on_violation(kind: str, detail: str) -> None:
        nonlocal sent
        sent += 1
        if sent <= _MAX_VIOLATION_FRAMES:
            detail = protocol.clean_text(scrub(detail), 300)
            writer.send(
                {"t": "violation", "kind": kind, "message": guard.violation_texts(kind, detail)[1]}
            )

    def emit(message: dict[str, Any]) -> None:
        if message["t"] == "end":
            # The generated code the helper can compile once for every later run; sent before
            # "end" because the helper answers on "end" and learns right after, before it
            # forks the spare for the next run.
            texts = codegen.missed()
            if texts:
                writer.send({"t": "codegen", "texts": texts})
        for field in ("message", "tb"):
            value = message.get(field)
            if isinstance(value, str):
                message[field] = protocol.clean_text(value, 4000)
        writer.send(message)

    def after_each() -> None:
        sys.stdout, sys.stderr = ours
        with contextlib.suppress(Exception):
            buffer.flush()

    extra = zoneinfo_dirs()
    # before any code of the run: a run is a function of its files (see determinism)
    determinism.install()
    finder = memimport.RunModuleFinder(run_dir, files, request["keys"])
    sys.meta_path.insert(0, finder)
    # the runner's own source stays readable so tracebacks through it never trip the guard
    guard.install_guard(run_dir, (*stdlib, *extra, _HELPER_DIR), on_violation, finder.touched)
    if request["probe_file"] is not None:
        # a grader run: observations only; whatever this process says is compared by the
        # caller with values that never enter it
        probe.observe(request["probe_file"], request["probes"], run_dir=run_dir, emit=emit)
    else:
        minitest.run_suite(
            request["tests"],
            run_dir=run_dir,
            stdlib_dirs=stdlib,
            hidden_dirs=(_HELPER_DIR,),
            emit=emit,
            after_each=after_each,
        )
    after_each()


def main(argv: Sequence[str]) -> NoReturn:
    """Entry point in a fresh interpreter: ``argv`` is [request fd, report fd].

    The plan (run folder, uid, key) arrives in the request, not on the command line, which
    other processes can read.
    """
    placeholder = ChildPlan(
        request_fd=int(argv[0]),
        report_fd=int(argv[1]),
        output_fd=1,
        run_dir="",
        uid=None,
        new_namespaces=False,
        scratch_dir="",
    )
    run_child(placeholder)
