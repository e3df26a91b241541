"""A fork server for fuzz cases: the parent imports Kiln (numpy, onnx, ortools, the templates)
once, then forks one child per case. A case therefore costs a fork instead of a fresh
interpreter, and still runs alone: its own process group, its own address-space limit, its own
peak RSS (from wait4), a wall-clock bound after which the parent kills the whole group, and
nothing it leaves in memory (a patched function, a cache) reaches the next case.

A case function runs in the child and yields JSON-able dicts: the first is the case's outcome,
any further ones are extra checks done after it (a sanitized build, a cross-check through the
real `kiln` process), each under its own bound. The parent gets them as lines on a pipe.
"""

from __future__ import annotations

import json
import os
import resource
import select
import signal
import time
import traceback
from dataclasses import dataclass, field
from typing import Callable, Iterator

CaseFunction = Callable[[int], Iterator[dict]]


@dataclass
class Finished:
    """What the parent knows about one case once its child is gone."""
    case: int
    messages: list[dict]            # what the child reported, in order
    killed_after: int | None        # number of messages received when the bound ran out, else None
    exit_status: int                # os.wait4 status
    peak_rss: int                   # bytes, the child and what it waited for
    seconds: float                  # wall time of the child


@dataclass
class _Child:
    case: int
    pid: int
    fd: int
    started: float
    deadline: float
    messages: list[dict] = field(default_factory=list)
    pending: bytes = b""
    killed_after: int | None = None


def _child_main(case: int, run: CaseFunction, write_fd: int, memory_limit: int) -> None:
    """Never returns: runs the case, reports, and leaves with os._exit (no atexit, no flush of
    the parent's buffers)."""
    status = 0
    try:
        os.setpgid(0, 0)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_AS, (memory_limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
        with os.fdopen(write_fd, "wb", buffering=0) as out:
            try:
                for message in run(case):
                    out.write((json.dumps(message) + "\n").encode())
            except BaseException as err:  # noqa: BLE001 - the harness failing is reported, not hidden
                text = "".join(traceback.format_exception(err))[-4000:]
                out.write((json.dumps({"harness_error": text}) + "\n").encode())
                status = 3
    finally:
        os._exit(status)


class ForkServer:
    """Up to `workers` cases at once, each in a forked child (see the module docstring).
    `bounds[i]` is the wall-clock bound, in seconds, for the child's message i (the first: the
    case itself); the last bound applies to any later message."""

    def __init__(self, run: CaseFunction, workers: int, bounds: tuple[float, ...], memory_limit: int):
        self.run, self.workers, self.bounds, self.memory_limit = run, workers, bounds, memory_limit
        self.children: dict[int, _Child] = {}  # by read fd

    def _bound(self, received: int) -> float:
        return self.bounds[min(received, len(self.bounds) - 1)]

    def start(self, case: int) -> None:
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_fd)
            _child_main(case, self.run, write_fd, self.memory_limit)
        os.close(write_fd)
        try:  # also here, so that a kill right after the fork reaches the group
            os.setpgid(pid, pid)
        except (PermissionError, ProcessLookupError):
            pass
        now = time.monotonic()
        self.children[read_fd] = _Child(case, pid, read_fd, now, now + self._bound(0))

    @property
    def free(self) -> int:
        return self.workers - len(self.children)

    def wait(self, timeout: float = 1.0) -> list[Finished]:
        """Read what the running children report; reap those that ended or ran out of time."""
        done: list[Finished] = []
        if not self.children:
            return done
        now = time.monotonic()
        wait_s = max(0.0, min(timeout, min(c.deadline for c in self.children.values()) - now))
        readable, _, _ = select.select(list(self.children), [], [], wait_s)
        for fd in readable:
            child = self.children[fd]
            data = os.read(fd, 1 << 16)
            if not data:
                done.append(self._reap(child))
                continue
            child.pending += data
            *lines, child.pending = child.pending.split(b"\n")
            for line in lines:
                child.messages.append(json.loads(line))
                child.deadline = time.monotonic() + self._bound(len(child.messages))
        now = time.monotonic()
        for child in [c for c in self.children.values() if c.deadline < now]:
            child.killed_after = len(child.messages)
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except ProcessLookupError:  # the group is already gone (or never made: pid then)
                os.kill(child.pid, signal.SIGKILL)
            done.append(self._reap(child))
        return done

    def _reap(self, child: _Child) -> Finished:
        del self.children[child.fd]
        os.close(child.fd)
        _, status, usage = os.wait4(child.pid, 0)
        try:  # grandchildren of a killed group (concurrent builds, a compiler): gone with the group
            os.killpg(child.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        return Finished(child.case, child.messages, child.killed_after, status, usage.ru_maxrss * 1024,
                        time.monotonic() - child.started)

    def stop(self) -> list[Finished]:
        """Kill whatever still runs (end of the campaign): those cases are not counted."""
        for child in list(self.children.values()):
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._reap(child)
        return []
