"""Per-file time and memory limits for batch work: one file at a time in a child process.

A batch worker hands each file to its :class:`Sandbox`, a long-lived child process (one per
worker and set of limits, started once, so a file costs a pipe round trip, not a process
start). While it waits, at most the time limit, the worker looks at the child's resident
memory every 50 ms (Linux's /proc; an address-space rlimit would break the thread pools
of polars and OpenBLAS, which reserve far more than they use). A file over either limit
fails alone, with one line, and the child is replaced for the next file; a child that
dies (a crash, the kernel's OOM killer) is reported the same way. The pipe carries JSON
only (never a pickle: an answer comes from a process that has just read an untrusted
file), and the child runs only the handlers named in :data:`HANDLERS`.
"""

from __future__ import annotations

import atexit
import importlib
import json
import math
import os
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import IO

from ..errors import MotionkitError

_HEADER = struct.Struct("<Q")
_CHILD = "from motionkit.dataset.sandbox import serve; serve()"
#: What a child may run: ``module:function`` taking and returning JSON values.
HANDLERS = frozenset({"motionkit.dataset.batch:work_json"})
#: Largest answer read from a child (an outcome is a few KB).
MAX_ANSWER = 64 << 20


@dataclass(frozen=True)
class Stopped:
    """Why a call in the sandbox gave no result (it went over a limit, or its process died)."""

    reason: str


@dataclass(frozen=True)
class Limits:
    """Per file: wall seconds (None: no limit) and MB of memory (None: no limit)."""

    seconds: float | None = 600.0
    memory_mb: int | None = 4096

    def __post_init__(self) -> None:
        for value in (self.seconds, self.memory_mb):
            if value is not None and not (math.isfinite(value) and value > 0):
                raise MotionkitError(f"a time or memory limit must be a positive number, not "
                                     f"{value}")

    @property
    def any(self) -> bool:
        return self.seconds is not None or self.memory_mb is not None


class Sandbox:
    """A child process doing one call at a time within :class:`Limits`."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.child: subprocess.Popen[bytes] | None = None

    def run(self, handler: str, payload: object) -> object | Stopped:
        """``handler(payload)`` in the child (one of :data:`HANDLERS`; JSON in and out), or
        why it gave no result."""
        if handler not in HANDLERS:
            raise ValueError(f"not a sandbox handler: {handler!r}")
        try:
            child = self.child if self.child is not None and self.child.poll() is None \
                else self._start()
            assert child.stdin is not None and child.stdout is not None
            _send(child.stdin, {"handler": handler, "payload": payload})
            answer = _receive(child, self.limits)
            if not isinstance(answer, dict) or not ("value" in answer or "stopped" in answer):
                raise EOFError  # not an answer of ours: the child is not trusted further
            if "stopped" in answer:
                self.close()  # the child stopped itself (its memory ran out)
                return Stopped(str(answer["stopped"]))
            value: object = answer["value"]
            return value
        except (OSError, EOFError, TimeoutError, OverMemory, ValueError) as exc:
            return Stopped(self._stopped(exc))

    def _stopped(self, exc: BaseException) -> str:
        """Why the child gave no outcome; it is stopped (the next file gets a new one)."""
        if self.child is None or isinstance(exc, _NotStarted):
            self.close()
            return f"the reading process did not start ({exc})"
        if isinstance(exc, TimeoutError):
            why = f"took longer than {self.limits.seconds:g} s (--timeout); stopped"
        elif isinstance(exc, OverMemory):
            why = f"needed more than {self.limits.memory_mb} MB (--memory); stopped"
        else:
            code = self.child.wait()
            why = (f"the reading process died (signal {-code})" if code < 0 else
                   f"the reading process ended (exit code {code})")
        self.close()
        return why

    def _start(self) -> subprocess.Popen[bytes]:
        self.close()
        child = self.child = subprocess.Popen([sys.executable, "-c", _CHILD],
                                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                              preexec_fn=_die_with_parent)
        assert child.stdout is not None
        # the limits count from here: the child's start-up (its imports) is not the file's
        ready = Limits(_START_SECONDS, None)
        try:
            header = _read_exactly(child.stdout, _HEADER.size, *_watching(child, ready))
            _read_exactly(child.stdout, _HEADER.unpack(header)[0], *_watching(child, ready))
        except (TimeoutError, EOFError) as exc:
            raise _NotStarted(f"no answer within {_START_SECONDS:g} s" if isinstance(
                exc, TimeoutError) else "it ended at once") from None
        return child

    def close(self) -> None:
        """Stop the child (a kill: it holds no state worth saving)."""
        if self.child is not None:
            if self.child.poll() is None:
                self.child.kill()
            self.child.wait()
            for pipe in (self.child.stdin, self.child.stdout):
                if pipe is not None:
                    pipe.close()
            self.child = None


#: One sandbox per thread and set of limits: a worker of several threads runs as many
#: files at once, each in its own child.
_sandboxes: dict[tuple[int, Limits], Sandbox] = {}
_lock = threading.Lock()


def run_limited(limits: Limits, handler: str, payload: object) -> object | Stopped:
    """``handler(payload)`` within ``limits``, in this thread's sandbox for them."""
    key = (threading.get_ident(), limits)
    with _lock:
        sandbox = _sandboxes.get(key)
        if sandbox is None:
            sandbox = _sandboxes[key] = Sandbox(limits)
    return sandbox.run(handler, payload)


@atexit.register
def _close_all() -> None:
    with _lock:
        sandboxes = list(_sandboxes.values())
    for sandbox in sandboxes:
        sandbox.close()


def _send(pipe: IO[bytes], value: object) -> None:
    data = json.dumps(value, allow_nan=False).encode()
    pipe.write(_HEADER.pack(len(data)) + data)
    pipe.flush()


class _NotStarted(OSError):
    """The child did not come up (its imports failed, or hung)."""


class OverMemory(Exception):
    """The child's resident memory went over the limit."""


def _receive(child: subprocess.Popen[bytes], limits: Limits) -> object:
    """The child's next answer: TimeoutError past the time limit, OverMemory past the
    memory limit (its resident size, looked at every ``_TICK`` s), EOFError if it died."""
    assert child.stdout is not None
    watching = _watching(child, limits)
    header = _read_exactly(child.stdout, _HEADER.size, *watching)
    size = _HEADER.unpack(header)[0]
    if size > MAX_ANSWER:
        raise EOFError  # no answer of ours is that big
    data = _read_exactly(child.stdout, size, *watching)
    answer: object = json.loads(data)
    return answer


_TICK = 0.05
#: Longest a child may take to start (import motionkit) before it counts as hung.
_START_SECONDS = 300.0


def _watching(child: subprocess.Popen[bytes], limits: Limits) -> tuple[float | None, _Watch]:
    """The deadline and the memory watch of one wait on ``child``."""
    deadline = None if limits.seconds is None else time.monotonic() + limits.seconds
    return deadline, _Watch(child.pid, limits.memory_mb)


@dataclass
class _Watch:
    """Reads a process's resident memory (VmRSS) from /proc; does nothing without it."""

    pid: int
    memory_mb: int | None

    def check(self) -> None:
        if self.memory_mb is None:
            return
        try:
            with open(f"/proc/{self.pid}/status") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        if int(line.split()[1]) > self.memory_mb * 1024:
                            raise OverMemory
                        return
        except OSError:
            return


def _read_exactly(pipe: IO[bytes], size: int, deadline: float | None, watch: _Watch) -> bytes:
    chunks: list[bytes] = []
    fd = pipe.fileno()
    while size:
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            raise TimeoutError
        ready, _, _ = select.select([fd], [], [], _TICK if left is None else min(left, _TICK))
        watch.check()
        if not ready:
            continue
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


# ---------------------------------------------------------------------- the child


def _die_with_parent() -> None:
    """In the child before it runs: killed when its worker dies (Linux), not left working
    on a file with no one to watch its limits."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def serve() -> None:
    """The child: answer (call, args) requests on stdin with results on stdout."""
    requests, answers = sys.stdin.buffer, os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything printed goes to stderr, never into the answers
    import motionkit.api  # noqa: F401  (start-up, not a call's time)

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the worker's to handle
    _send(answers, "ready")
    while True:
        try:
            header = requests.read(_HEADER.size)
            if len(header) < _HEADER.size:
                return
            request = json.loads(requests.read(_HEADER.unpack(header)[0]))
        except (EOFError, OSError, ValueError):
            return
        if request.get("handler") not in HANDLERS:
            return
        module, name = request["handler"].split(":")
        try:
            value = getattr(importlib.import_module(module), name)(request["payload"])
            _send(answers, {"value": value})
        except MemoryError:  # the machine's memory, not our limit: the next call gets a new child
            _send(answers, {"stopped": "MemoryError: out of memory"})
            return
