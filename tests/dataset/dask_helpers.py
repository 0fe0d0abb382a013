"""Helpers of the dataset tests: a generated dataset and a real Dask cluster on 127.0.0.1."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import motionkit as mk
from motionkit.model import Motion, Timeline, Track

#: Formats of the generated dataset (each holds a stamped or uniform root pose).
EXTENSIONS = (".tum", ".traj", ".seq")


def pose_motion(rng: np.random.Generator, frames: int = 20) -> Motion:
    """A small root-pose motion at 30 Hz."""
    q = rng.normal(size=(frames, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    motion = Motion()
    motion.add(Track("root", "pose", np.concatenate([rng.normal(size=(frames, 3)), q], 1),
                     Timeline.uniform(30.0, frames)))
    return motion


def make_dataset(root: Path, count: int, seed: int = 0) -> tuple[list[Path], list[Path]]:
    """``count`` good files of several formats in five folders, and a few broken ones."""
    rng = np.random.default_rng(seed)
    good = []
    for index in range(count):
        folder = root / f"group{index % 5}" / ("deep" if index % 7 == 0 else "")
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"m{index:04d}{EXTENSIONS[index % len(EXTENSIONS)]}"
        mk.write(path, pose_motion(rng))
        good.append(path)
    broken = [root / "group0" / "short.tum", root / "group1" / "bad.seq",
              root / "group2" / "bad\x1b[31m.tum", root / "group3" / "bad.traj"]
    broken[0].write_text("1 2 3\n")
    broken[1].write_text("type: Nonsense\nframeRate: [\n")
    broken[2].write_text("0 1 2 3 4 5 6 x\n")
    broken[3].write_bytes(b"\x00\xff\xfejunk\n")
    return good, broken


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Cluster:
    """A scheduler and its workers, as subprocesses this test started."""

    address: str
    scheduler: subprocess.Popen[bytes]
    workers: list[subprocess.Popen[bytes]]


def _dask() -> str:
    return str(Path(sys.executable).with_name("dask"))


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


@contextlib.contextmanager
def dask_cluster(workers: int, log: Path) -> Iterator[Cluster]:
    """``dask scheduler`` and ``workers`` x ``dask worker`` (one thread, no nanny) on
    127.0.0.1 at free ports; all stopped by their PIDs on exit."""
    from distributed import Client

    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    started: list[subprocess.Popen[bytes]] = []
    try:
        with open(log, "ab") as out:
            scheduler = subprocess.Popen(
                [_dask(), "scheduler", "--host", "127.0.0.1", "--port", str(port),
                 "--no-dashboard"], stdout=out, stderr=out, env=env)
            started.append(scheduler)
            deadline = time.monotonic() + 30
            while True:
                with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                    break
                if time.monotonic() > deadline or scheduler.poll() is not None:
                    raise RuntimeError(f"the Dask scheduler did not start (see {log})")
                time.sleep(0.1)
            pool = [subprocess.Popen([_dask(), "worker", address, "--host", "127.0.0.1",
                                      "--nthreads", "1", "--no-nanny", "--no-dashboard"],
                                     stdout=out, stderr=out, env=env) for _ in range(workers)]
            started.extend(pool)
        with Client(address, timeout="30s") as client:
            client.wait_for_workers(workers, timeout=60)
        yield Cluster(address, scheduler, pool)
    finally:
        for process in reversed(started):
            _stop(process)


def need_ray() -> None:
    """Skip without Ray (the ``ray`` extra); ``MOTIONKIT_REQUIRE_RAY=1`` (set by .ci/run)
    makes it a failure."""
    import importlib.util

    import pytest

    if importlib.util.find_spec("ray") is None:
        reason = "Ray is not installed (pip install 'motionkit[ray]')"
        if os.environ.get("MOTIONKIT_REQUIRE_RAY", "") not in ("", "0"):
            pytest.fail(f"{reason} (MOTIONKIT_REQUIRE_RAY=1)")
        pytest.skip(reason)


#: The environment of the test's Ray head and of the batches that join it: no usage
#: statistics, and no token authentication (Ray 2.60 turns it on for a head when
#: ~/.ray/auth_token exists — any local ``ray.init`` writes one — and then its Ray Client
#: refuses clients; the head listens on loopback only, inside a test).
RAY_TEST_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}


@dataclass
class RayHead:
    """A Ray head node this test started (``ray start --block``), its client address."""

    address: str
    client: str
    process: subprocess.Popen[bytes]


@contextlib.contextmanager
def ray_head(cpus: int, log: Path) -> Iterator[RayHead]:
    """``ray start --head --block`` on 127.0.0.2 (a loopback address Ray does not swap for
    the machine's own, as it does 127.0.0.1) with ``cpus`` CPUs, so ``cpus`` worker
    processes, and Ray Client's port; stopped on exit by the PID of the process started
    here and its process group (every Ray process of the node is in it)."""
    import tempfile

    port, client = _free_port(), _free_port()
    scratch = Path(tempfile.mkdtemp(prefix="mkray", dir="/tmp"))  # Ray's sockets want short paths
    env = {**os.environ, **RAY_TEST_ENV, "PYTHONUNBUFFERED": "1"}
    with open(log, "ab") as out:
        head = subprocess.Popen(
            [str(Path(sys.executable).with_name("ray")), "start", "--head", "--node-ip-address",
             "127.0.0.2", "--port", str(port), "--ray-client-server-port", str(client),
             "--num-cpus", str(cpus), "--include-dashboard", "false", "--temp-dir", str(scratch),
             "--block"], stdout=out, stderr=out, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while b"Ray runtime started" not in log.read_bytes():
            if time.monotonic() > deadline or head.poll() is not None:
                raise RuntimeError(f"the Ray head did not start (see {log})")
            time.sleep(0.2)
        for _ in range(600):  # Ray Client's server comes up a little later
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.2", client), 1):
                break
            time.sleep(0.1)
        yield RayHead(f"127.0.0.2:{port}", f"ray://127.0.0.2:{client}", head)
    finally:
        if head.poll() is None:
            head.send_signal(signal.SIGTERM)  # ray start --block stops its node's processes
            try:
                head.wait(30)
            except subprocess.TimeoutExpired:
                head.kill()
                head.wait(10)
        with contextlib.suppress(ProcessLookupError):  # anything of the node still left
            os.killpg(head.pid, signal.SIGKILL)
        import shutil

        shutil.rmtree(scratch, ignore_errors=True)


def children(parent: int) -> list[tuple[int, str]]:
    """The processes whose parent is ``parent`` (from /proc): (pid, command line)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            command = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError):
            continue
        if int(stat.rsplit(")", 1)[-1].split()[1]) == parent:
            found.append((int(entry), command))
    return found


def descendants(root: int) -> list[tuple[int, str]]:
    """Every process below ``root``: (pid, command line)."""
    found, todo = [], [root]
    while todo:
        below = children(todo.pop())
        found += below
        todo += [pid for pid, _ in below]
    return found
