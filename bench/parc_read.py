"""Safe PARC read vs plain ``pickle.load`` of the same generated 100,000-frame MS file.

Run: ``.venv/bin/python bench/parc_read.py [frames]``. Prints the best of several runs
and the speed ratio (unsafe time / safe time; the goal is >= 0.8). The plain unpickler
runs here only on the file this script just wrote.
"""

from __future__ import annotations

import pickle
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from motionkit.formats.parc import ms, safepickle, writepickle


def make_file(path: Path, frames: int) -> None:
    rng = np.random.default_rng(0)
    q = rng.normal(size=(frames, 15, 4)).astype(np.float32)
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    motion = {"root_pos": rng.normal(size=(frames, 3)).astype(np.float32),
              "root_rot": np.ascontiguousarray(q[:, 0]), "joint_rot": np.ascontiguousarray(q[:, 1:]),
              "body_contacts": rng.random((frames, 15)).astype(np.float32), "fps": 30,
              "loop_mode": "CLAMP"}
    terrain = {"hf": rng.normal(size=(200, 200)).astype(np.float32),
               "hf_maxmin": rng.normal(size=(200, 200, 2)).astype(np.float32),
               "min_point": np.zeros(2, np.float32), "dx": 0.4000000059604645}
    misc = {"path_nodes": rng.normal(size=(50, 3)).astype(np.float32)}
    path.write_bytes(writepickle.dumps({"motion_data": writepickle.dumps(motion),
                                        "terrain_data": writepickle.dumps(terrain),
                                        "misc_data": writepickle.dumps(misc)}))


def unsafe_load(path: Path) -> dict[str, Any]:
    """What PARC's file_io.load_ms_file does (plain pickle, arbitrary code possible)."""
    with open(path, "rb") as handle:
        outer = pickle.load(handle)
    return {key: pickle.loads(blob) for key, blob in outer.items() if blob is not None}


def safe_load(path: Path) -> dict[str, Any]:
    """The same decoding through motionkit's restricted unpickler."""
    outer = safepickle.loads(path.read_bytes(), path, "file", allowed={})
    allowed = {"misc_data": safepickle.MISC_GLOBALS}
    return {key: safepickle.loads(blob, path, key,
                                  allowed=allowed.get(key, safepickle.NUMPY_GLOBALS))
            for key, blob in outer.items() if blob is not None}


def best(action: Callable[[], Any], repeat: int = 7) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    frames = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "big.pkl"
        make_file(path, frames)
        size = path.stat().st_size / 1e6
        unsafe = best(lambda: unsafe_load(path))
        safe = best(lambda: safe_load(path))
        full = best(lambda: ms.read(path))
        write = best(lambda: ms.encode(ms.read(path)), repeat=3)
    print(f"file: {frames} frames, {size:.1f} MB")
    print(f"plain pickle.load (unsafe)     {unsafe * 1e3:8.1f} ms")
    print(f"safe decode (same dicts)       {safe * 1e3:8.1f} ms   speed ratio {unsafe / safe:.2f}x")
    print(f"motionkit.read -> Motion       {full * 1e3:8.1f} ms   speed ratio {unsafe / full:.2f}x")
    print(f"read + byte-exact encode       {write * 1e3:8.1f} ms")


if __name__ == "__main__":
    main()
