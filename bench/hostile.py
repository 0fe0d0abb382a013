"""Benchmark: what the hostile-file generators cost each reader, and the pickle scan speed.

Runs every generator of ``tests/hostile/hostile_files.py`` in a child process under the
memory limit (as the tests do) at its default size and at four times that size, and
prints per case: file size, time, memory the read added, memory/size and seconds per MB,
and the time ratio between the two sizes (linear work: about 4 or less, since a refusal
often comes before the whole file is read). Then times the PARC opcode pre-scan on
honest and hostile opcode streams. Goal: memory <= 50x file size + 100 MB, linear time.

    .venv/bin/python bench/hostile.py
"""

from __future__ import annotations

import inspect
import pickle
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "hostile"))

from hostile_files import CASES  # noqa: E402
from hostile_run import memory_goal, run_child  # noqa: E402

from motionkit.formats.parc.pickle_scan import scan  # noqa: E402


def _scaled(make: Callable[..., bytes], factor: int) -> Callable[[], bytes]:
    """The generator with its first size parameter multiplied by ``factor``."""
    parameters = list(inspect.signature(make).parameters.values())
    if not parameters or not isinstance(parameters[0].default, int):
        return make
    return lambda: make(parameters[0].default * factor)


def _measure(case_call: dict[str, object], data: bytes, folder: Path, name: str,
             seconds: float) -> dict[str, object]:
    path = folder / name
    path.write_bytes(data)
    report = run_child({**case_call, "path": str(path)}, len(data), seconds)
    report["size"] = len(data)
    return report


def readers() -> None:
    print("| case | reader | size | outcome | time | added memory | memory/size | within goal "
          "| s per MB | time ×4 size |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as folder:
        for case in CASES:
            small = _measure(case.call, case.make(), Path(folder), case.filename, case.seconds)
            big = _measure(case.call, _scaled(case.make, 4)(), Path(folder), case.filename,
                           case.seconds * 4)
            size = int(small["size"])  # type: ignore[call-overload]
            added = max(int(small.get("peak_kb", 0)) - int(small.get("base_kb", 0)), 0) * 1024  # type: ignore[call-overload]
            took = float(small.get("seconds", float("nan")))  # type: ignore[arg-type]
            ratio = (float(big.get("seconds", float("nan"))) / took  # type: ignore[arg-type]
                     if big["size"] != size and took > 0.005 else float("nan"))
            reader = case.call.get("module", "safepickle")
            print(f"| {case.name} | {reader} | {size:,} B | {small['outcome']} | "
                  f"{took * 1000:.0f} ms | {added / 1e6:.1f} MB | {added / size:.1f}× | "
                  f"{'yes' if added <= memory_goal(size) else 'NO'} | "
                  f"{took / (size / 1e6):.3f} | "
                  + (f"{ratio:.1f}" if ratio == ratio else "–") + " |")


def pickle_scan() -> None:
    shapes = {
        "list of 2M floats (protocol 2)": pickle.dumps([float(i) for i in range(2_000_000)], 2),
        "list of 1M ints (protocol 2)": pickle.dumps(list(range(1_000_000)), 2),
        "300k 1-tuples (protocol 4)": pickle.dumps([(i,) for i in range(300_000)], 4),
        "100k 4-deep lists (protocol 4)": pickle.dumps([[[[i]]] for i in range(100_000)], 4),
        "hostile: 10 MB of MARK/POP_MARK": b"\x80\x02" + b"(1" * 5_000_000 + b"N.",
        "hostile: 4 MB of NONE/POP": b"\x80\x02" + b"N0" * 2_000_000 + b"N.",
        "20,000 byte strings of 1 KB (protocol 4)": pickle.dumps(
            [bytes([i % 256]) * 1000 + i.to_bytes(4, "little") for i in range(20_000)], 4),
    }
    corpus = REPO.parent / "shared" / "corpus" / "mimickit"
    for path in sorted(corpus.glob("*.pkl")):
        shapes[f"corpus {path.name} (mean of 50 scans)"] = path.read_bytes()
    print("\n| pickle | size | scan time | MB/s |")
    print("| --- | --- | --- | --- |")
    for name, data in shapes.items():
        rounds = 50 if name.startswith("corpus") else 1
        start = time.perf_counter()
        for _ in range(rounds):
            scan(data)
        took = (time.perf_counter() - start) / rounds
        print(f"| {name} | {len(data) / 1e6:.1f} MB | {took:.2f} s | {len(data) / took / 1e6:.1f} |")


if __name__ == "__main__":
    readers()
    pickle_scan()
