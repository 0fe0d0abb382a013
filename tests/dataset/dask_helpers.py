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
