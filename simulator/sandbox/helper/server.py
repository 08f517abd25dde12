"""The fork server: a warm, single-threaded helper process that forks one child per run.

Stdlib only; started by ForkServerRunner as ``python -P -s -S`` with this folder imported as
a private package. It preloads the modules tests commonly use, sets up the OS layers that can
be shared by all runs (network and mount namespaces), then serves requests arriving on a
SEQPACKET control socket: each carries a wall timeout and three descriptors from the caller
(one end of a socketpair, over which the child reads its request and this server later writes
the exit message, and the write ends of the caller's report and output pipes).

This process never reads a run's request, frames or output: they go between the caller and the
child. Every spare is forked from this process's memory, so nothing a run said (a grader run's
observations, another session's output) can be found in a later run, however it reads its
own pages.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import marshal
import os
import selectors
import signal
import socket
import sys
import time
import traceback
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

from . import child, isolation, landlock, seccomp
from .accel import codegen, memimport
from .folders import remove_tree
from .protocol import CONTROL_MAX, DONE, HEADER
from .warmup import warm_up

__all__ = ["main"]


@dataclass(eq=False)
class _Run:
    pid: int
    pidfd: int
    reply: socket.socket
    deadline: float
    slot: int
    uid: int | None
    run_dir: str
    go: socket.socket
    sequence: int
    timed_out: bool = False


@dataclass(eq=False)
class _Pending:
    reply: socket.socket
    """The request socket: the child reads its request on it, the exit message goes back on it."""
    report_w: int
    output_w: int
    wall: float
    sequence: int

    def close(self) -> None:
        self.reply.close()
        for fd in (self.report_w, self.output_w):
            with contextlib.suppress(OSError):
                os.close(fd)


@dataclass(eq=False)
class _Zygote:
    pid: int
    pidfd: int
    sock: socket.socket
    rehearsing: bool
    """Still rehearsing at idle priority: not to be handed a run."""
    rehearsed: bool = False


@dataclass(eq=False)
class _Reply:
    sock: socket.socket
    data: memoryview = field(default_factory=lambda: memoryview(b""))


class _Server:
    def __init__(self, config: dict[str, Any]) -> None:
        self.base_dir: str = config["base_dir"]
        self.uid_base: int | None = config["uid_base"]
        self.uid_count: int = config["uid_count"]
        self.max_concurrency: int = config["max_concurrency"]
        self.control = socket.socket(fileno=config["control_fd"])
        self.selector = selectors.DefaultSelector()
        self.free_slots = list(range(self.max_concurrency - 1, -1, -1))
        self.pending: deque[_Pending] = deque()
        self.active: dict[int, _Run] = {}
        self.replies: set[_Reply] = set()
        self.zygotes: list[_Zygote] = []
        self.spare_target: int = config["spares"]
        self.netns_per_run: bool = config["netns_per_run"]
        self.rehearse: bool = config["rehearse"]
        self.accelerate: bool = config["accelerate"]
        self.stopping = False
        self.drop_uid = False
        self.layers: list[str] = []
        self.missing: list[str] = []
        """Layers every run needs that this machine cannot give (see ForkServerRunner)."""

    # -- start-up -------------------------------------------------------------------------

    def prepare(self, preload: Sequence[str]) -> None:
        """Preload modules, set up the shared OS layers, warm up, and freeze the heap."""
        for name in preload:
            with contextlib.suppress(Exception):
                importlib.import_module(name)
        stdlib = child.stdlib_dirs()
        if isolation.is_root():
            if self.netns_per_run:
                self.layers.append("network namespace without interfaces, one per run")
            elif isolation.unshare(isolation.CLONE_NEWNET):
                self.layers.append("network namespace without interfaces (shared by runs)")
            can_switch = isolation.has_capabilities(
                isolation.CAP_CHOWN, isolation.CAP_SETGID, isolation.CAP_SETUID
            )
            if self.uid_base is not None and can_switch:
                traversable = all(isolation.traversable_by_others(p) for p in stdlib)
                if not traversable and isolation.unshare(isolation.CLONE_NEWNS):
                    traversable = isolation.expose_to_others(stdlib, self.base_dir)
                    if traversable:
                        self.layers.append(
                            "mount namespace exposing only the standard library of closed ancestors"
                        )
                self.drop_uid = traversable
            if self.drop_uid:
                assert self.uid_base is not None
                # the block's last holder may have died with runs still going (its lock goes
                # with it, its runs do not): they must not outlive it into this server's runs
                for uid in range(self.uid_base, self.uid_base + self.uid_count):
                    isolation.sweep_uid(uid)
                self.layers.append("private unprivileged uid per run, run folder mode 0700")
                self.layers.append("RLIMIT_NPROC per run uid")
        if seccomp.prepare():
            self.layers.append(
                "seccomp: no execve, fork, vfork, ptrace or io_uring; clone for threads only;"
                " socketpairs only (no network, no named socket); no System V IPC, message"
                " queues or keyrings; no access to other processes, namespaces or mounts"
            )
        else:
            self.missing.append("seccomp (no filter for this machine, or no seccomp)")
        abi = landlock.abi_version()
        self.layers.extend(landlock.describe(abi))
        if abi < 1:
            self.missing.append(
                "Landlock (files confined by the kernel; Linux 5.13+): this kernel has none"
            )
        elif abi < 6 and not self.drop_uid:
            # seccomp already keeps every run off TCP; signals need Landlock's scope or a uid
            self.missing.append(
                f"signal isolation: Landlock ABI 6 (Linux 6.12+; this kernel has ABI {abi})"
                " or a private uid per run (root with CAP_SETUID)"
            )
        if not self.drop_uid:
            # not required (Landlock confines files and signals without it), but say so
            self.layers.append("no private uid per run (not root, or no CAP_SETUID)")
        self.layers.extend(
            [
                "rlimits: CPU, AS, FSIZE, NOFILE, CORE=0",
                "process group killed after each run",
                "audit hook: network, processes, signals, ctypes, files outside the run folder",
                "empty environment, stdlib-only sys.path",
            ]
        )
        os.environ.clear()
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if self.accelerate:
            codegen.install()
        warm_up(os.path.join(self.base_dir, "warm-up"), stdlib)
        codegen.reset_misses()
        child.remember_own_modules()
        child.zoneinfo_dirs()
        child.readable_roots(stdlib)
        # children then share these pages copy-on-write without the collector touching them
        gc.collect()
        gc.freeze()

    # -- runs -----------------------------------------------------------------------------

    def spawn_zygote(self, rehearse: bool) -> None:
        # Only ever called from serve() through refill() or spawn_for_pending(), whose frames
        # hold no run: the tests can walk their stack up into these frames.
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = os.fork()
        if pid == 0:
            try:
                go_fd, scratch_dir = theirs.fileno(), self.base_dir
                # the server's state holds other runs' results and replies in flight
                child.abandon(self.__dict__)
                self.__dict__ = {}
                child.zygote(go_fd, scratch_dir, rehearse)
            finally:
                os._exit(71)
        theirs.close()
        zygote = _Zygote(pid, os.pidfd_open(pid), mine, rehearsing=rehearse)
        self.zygotes.append(zygote)
        self.selector.register(zygote.pidfd, selectors.EVENT_READ, ("zygote", zygote))
        if rehearse:
            self.selector.register(mine, selectors.EVENT_READ, ("warm", zygote))

    def spawn_for_pending(self) -> None:
        # Runs that found no spare ready get plain ones at once: waiting for a rehearsal
        # step to end would cost more than a fresh fork (about half a millisecond here).
        ready = sum(1 for z in self.zygotes if not z.rehearsing)
        for _ in range(min(len(self.pending), len(self.free_slots)) - ready):
            self.spawn_zygote(rehearse=False)

    def refill(self) -> None:
        # With rehearsal on, one plain spare stays ready beside the rehearsing ones, so a
        # run arriving before any rehearsal ends still finds a forked child waiting.
        if self.stopping:
            return
        if self.rehearse and not any(not z.rehearsing and not z.rehearsed for z in self.zygotes):
            self.spawn_zygote(rehearse=False)
        while len(self.zygotes) < self.spare_target + (1 if self.rehearse else 0):
            self.spawn_zygote(rehearse=self.rehearse)

    def on_warm(self, zygote: _Zygote) -> None:
        if zygote not in self.zygotes or not zygote.rehearsing:
            return  # handed a run, retired or stopped earlier in the same round of events
        with contextlib.suppress(OSError):
            zygote.sock.recv(16)
        zygote.rehearsing = False
        zygote.rehearsed = True
        self.selector.unregister(zygote.sock)

    def retire_spares(self) -> None:
        # Spares forked before the helper learned new code lack it; the next refill forks
        # ones that have it. A retired spare sees its go socket close and exits.
        if self.stopping:
            return
        for zygote in list(self.zygotes):
            if zygote.rehearsing:
                with contextlib.suppress(KeyError, ValueError):
                    self.selector.unregister(zygote.sock)
                zygote.rehearsing = False
            zygote.sock.close()
            self.zygotes.remove(zygote)  # its pidfd stays registered until it is reaped

    def reap_zygote(self, zygote: _Zygote) -> None:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(zygote.pid, 0)
        self.selector.unregister(zygote.pidfd)
        if zygote.rehearsing:
            with contextlib.suppress(KeyError, ValueError):
                self.selector.unregister(zygote.sock)
        os.close(zygote.pidfd)
        zygote.sock.close()
        with contextlib.suppress(ValueError):
            self.zygotes.remove(zygote)

    def start_run(self, request: _Pending, zygote: _Zygote) -> None:
        self.zygotes.remove(zygote)
        self.selector.unregister(zygote.pidfd)
        slot = self.free_slots.pop()
        uid = self.uid_base + slot if (self.drop_uid and self.uid_base is not None) else None
        run_dir = f"{self.base_dir}/run-{request.sequence}"
        go = marshal.dumps(
            {
                "run_dir": run_dir,
                "uid": uid,
                "scratch_dir": self.base_dir,
                "new_namespaces": self.netns_per_run,
            }
        )
        fds = [request.reply.fileno(), request.report_w, request.output_w]
        try:
            socket.send_fds(zygote.sock, [go], fds)
        finally:
            # the pipes are the caller's and the child's: this process never reads a run
            os.close(request.report_w)
            os.close(request.output_w)
        # zygote.sock stays open until the child exits: closing a unix socket with unread
        # data (a late "warm" byte) would reset the child's end before it reads the go message
        run = _Run(
            pid=zygote.pid,
            pidfd=zygote.pidfd,
            reply=request.reply,
            deadline=time.monotonic() + request.wall,
            slot=slot,
            uid=uid,
            run_dir=run_dir,
            go=zygote.sock,
            sequence=request.sequence,
        )
        self.active[run.pid] = run
        self.selector.register(run.pidfd, selectors.EVENT_READ, ("exit", run))

    def start_pending(self) -> None:
        while self.pending and self.free_slots and not self.stopping:
            # a spare that finished its rehearsal, else a plain one
            ready = [z for z in self.zygotes if not z.rehearsing]
            zygote = next((z for z in ready if z.rehearsed), ready[0] if ready else None)
            if zygote is None:
                return  # serve() forks one after this round of events
            request = self.pending.popleft()
            try:
                self.start_run(request, zygote)
            except Exception:
                traceback.print_exc()
                self.send_reply(request.reply, _failure("the sandbox helper could not fork a run"))

    def kill(self, run: _Run) -> None:
        for target in (-run.pid, run.pid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(target, signal.SIGKILL)

    def finish(self, run: _Run) -> None:
        status: int | None = None
        cpu_time = 0.0
        try:
            _, status, usage = os.wait4(run.pid, 0)
            cpu_time = usage.ru_utime + usage.ru_stime
        except ChildProcessError:
            pass
        # anything the run left behind: its process group, and (when it had its own uid)
        # any process of that uid that escaped the group
        self.kill(run)
        if run.uid is not None:
            isolation.sweep_uid(run.uid)
        self.selector.unregister(run.pidfd)
        os.close(run.pidfd)
        run.go.close()
        del self.active[run.pid]
        remove_tree(run.run_dir)
        self.free_slots.append(run.slot)
        failure = ""
        if self.stopping and not run.timed_out:
            failure = "the runner was closed while the tests were running"
        self.send_reply(
            run.reply,
            {
                "wait_status": status,
                "cpu_seconds": cpu_time,
                "timed_out": run.timed_out,
                "failure": failure,
            },
        )

    def send_reply(self, sock: socket.socket, response: dict[str, Any]) -> None:
        with contextlib.suppress(OSError):
            # a client still blocked writing its request gets EPIPE instead of hanging
            sock.shutdown(socket.SHUT_RD)
        sock.setblocking(False)
        # unread request bytes at close() would reset the connection and lose the reply
        with contextlib.suppress(OSError):
            while sock.recv(1 << 16):
                pass
        data = json.dumps(response, separators=(",", ":")).encode()
        reply = _Reply(sock, memoryview(data))
        self.replies.add(reply)
        self.selector.register(sock, selectors.EVENT_WRITE, ("reply", reply))
        self.write_reply(reply)

    def write_reply(self, reply: _Reply) -> None:
        try:
            while reply.data:
                sent = reply.sock.send(reply.data)
                reply.data = reply.data[sent:]
        except BlockingIOError:
            return
        except OSError:
            pass  # the client went away; nothing to tell
        self.selector.unregister(reply.sock)
        reply.sock.close()
        self.replies.discard(reply)

    # -- control --------------------------------------------------------------------------

    def on_control(self) -> None:
        # Drain whatever is queued: bytecode sent right behind a run request is then learned
        # before refill() forks the next spare, which so inherits it.
        while not self.stopping:
            try:
                message, fds, _flags, _addr = socket.recv_fds(self.control, CONTROL_MAX, 4)
            except BlockingIOError:
                return
            except OSError:
                message, fds = b"", []
            if not message and not fds:
                self.stop()
                return
            self.on_message(message, list(fds))

    def on_message(self, message: bytes, fds: list[int]) -> None:
        if message[:1] in (b"C", b"G") and not fds:
            if self.accelerate:
                # from the caller, over its private control socket, and only for files every
                # session has (see ForkServerRunner): nothing of one session reaches another
                with contextlib.suppress(Exception):
                    if message[:1] == b"C":
                        memimport.learn_bytecode(marshal.loads(message[1:]))
                    elif codegen.learn(marshal.loads(message[1:])):
                        self.retire_spares()
            return
        if message[:1] == b"D" and len(message) == DONE.size and not fds:
            _, sequence = DONE.unpack(message)
            for run in self.active.values():
                if run.sequence == sequence:
                    self.kill(run)  # its exit arrives as usual, and is sent to no one
            return
        if len(fds) != 3 or len(message) != HEADER.size or message[:1] != b"R":
            for fd in fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
            return
        _, wall, sequence = HEADER.unpack(message)
        reply = socket.socket(fileno=fds[0])
        self.pending.append(_Pending(reply, fds[1], fds[2], wall, int(sequence)))
        self.start_pending()

    def stop(self) -> None:
        if self.stopping:
            return
        self.stopping = True
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(self.control)
        for run in list(self.active.values()):
            self.kill(run)
        while self.pending:
            self.pending.popleft().close()
        for zygote in self.zygotes:
            if zygote.rehearsing:
                # A zygote that died during the rehearsal has already closed its socket.
                with contextlib.suppress(KeyError, ValueError):
                    self.selector.unregister(zygote.sock)
                zygote.rehearsing = False  # nothing left to hear from it
            zygote.sock.close()  # a parked spare sees EOF and exits

    def serve(self) -> None:
        self.refill()
        ready = {"t": "ready", "pid": os.getpid(), "layers": self.layers, "missing": self.missing}
        self.control.send(json.dumps(ready).encode())
        self.control.setblocking(False)
        self.selector.register(self.control, selectors.EVENT_READ, ("control", None))
        while not (self.stopping and not self.active and not self.replies and not self.zygotes):
            self.dispatch(self.selector.select(self.next_timeout()))
            if self.pending:
                self.spawn_for_pending()
                self.start_pending()
            # forking the next spare here overlaps it with the run that just started
            self.refill()
            self.check_deadlines()

    def next_timeout(self) -> float | None:
        waiting = [r.deadline for r in self.active.values() if not r.timed_out]
        return max(0.0, min(waiting) - time.monotonic()) if waiting else None

    def dispatch(self, events: list[tuple[selectors.SelectorKey, int]]) -> None:
        for key, _mask in events:
            kind, item = key.data
            try:
                if kind == "control":
                    self.on_control()
                elif kind == "exit":
                    self.finish(item)
                    self.start_pending()
                elif kind == "reply":
                    self.write_reply(item)
                elif kind == "zygote":
                    self.reap_zygote(item)
                elif kind == "warm":
                    self.on_warm(item)
            except Exception:
                traceback.print_exc()

    def check_deadlines(self) -> None:
        now = time.monotonic()
        for run in list(self.active.values()):
            if not run.timed_out and now >= run.deadline:
                run.timed_out = True
                self.kill(run)


def _failure(message: str) -> dict[str, Any]:
    return {"wait_status": None, "cpu_seconds": 0.0, "timed_out": False, "failure": message}


def main(argv: Sequence[str]) -> NoReturn:
    """Entry point: ``argv[0]`` is the JSON configuration written by ForkServerRunner."""
    config = json.loads(argv[0])
    server = _Server(config)
    code = 0
    try:
        server.prepare(config["preload"])
        server.serve()
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        # the caller removes it too, unless it was killed, which is why the helper stopped
        with contextlib.suppress(OSError):
            remove_tree(server.base_dir)
        sys.stderr.flush()
        os._exit(code)
