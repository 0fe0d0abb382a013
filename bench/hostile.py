"""Benchmark: what the hostile-file generators cost each reader, and the pickle scan speed.

Runs every generator of ``tests/hostile/hostile_files.py`` in a child process under the
memory limit (as the tests do) at its default size and at four times that size, and
records per case: file size, CPU time, memory the read added, memory/size and seconds per MB,
and the time ratio between the two sizes (linear work: about 4 or less, since a refusal
often comes before the whole file is read). Then times the PARC opcode pre-scan (the
compiled walk, and the Python walk that states its rules) on honest and hostile opcode
streams of about 20 MB, beside ``pickle.loads`` of the honest ones. Goals: memory <= 50x
file size + 100 MB, linear time, a scan of >= 20 MB/s on any opcode stream.

    .venv/bin/python bench/hostile.py
"""

from __future__ import annotations

import inspect
import pickle
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "hostile"))

from _report import Report, timed  # noqa: E402
from hostile_files import CASES  # noqa: E402
from hostile_run import memory_goal, run_child  # noqa: E402

from motionkit.formats.shared.pickles.pickle_scan import COMPILED, scan, scan_reference  # noqa: E402


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


def readers(report: Report) -> None:
    """Every generator at its size and at four times it: memory/size and CPU time."""
    rows: list[list[str]] = []
    worst_memory, worst_growth = 0.0, 0.0
    with tempfile.TemporaryDirectory() as folder:
        for case in CASES:
            small = _measure(case.call, case.make(), Path(folder), case.filename, case.seconds)
            big = _measure(case.call, _scaled(case.make, 4)(), Path(folder), case.filename,
                           case.seconds * 4)
            size = int(small["size"])  # type: ignore[call-overload]
            added = max(int(small.get("peak_kb", 0)) - int(small.get("base_kb", 0)), 0) * 1024  # type: ignore[call-overload]
            took = float(small.get("cpu_seconds", float("nan")))  # type: ignore[arg-type]
            growth = (float(big.get("cpu_seconds", float("nan"))) / took  # type: ignore[arg-type]
                      if big["size"] != size and took > 0.05 else float("nan"))
            share = added / memory_goal(size)
            worst_memory = max(worst_memory, share)
            if growth == growth:
                worst_growth = max(worst_growth, growth * size / int(big["size"]))  # type: ignore[call-overload]
            rows.append([case.name, str(case.call.get("module", "safepickle")), f"{size:,} B",
                         str(small["outcome"]), f"{took:.2f} s", f"{added / 1e6:.1f} MB",
                         f"{added / size:.1f}×", f"{share:.2f}", f"{took / (size / 1e6):.3f}",
                         f"{growth:.1f}" if growth == growth else "–"])
    report.row("memory added, worst case", f"{worst_memory:.2f} of the goal",
               "≤ 50 × size + 100 MB (≤ 1.00)", worst_memory <= 1.0)
    report.row("CPU time at 4× the size, worst case", f"{worst_growth:.2f} × linear",
               "linear (≤ 1.5 × linear)", worst_growth <= 1.5)
    report.table(["case", "reader", "size", "outcome", "CPU", "added memory", "memory/size",
                  "of the memory goal", "CPU s per MB", "CPU at 4× size"], rows)


def _cpu(call: Callable[[], object], rounds: int = 1) -> float:
    return sum(timed(call).cpu for _ in range(rounds)) / rounds


def pickle_scan(report: Report) -> None:
    honest = {
        "list of 2M floats (protocol 2)": pickle.dumps([float(i) for i in range(2_000_000)], 2),
        "list of 4M ints (protocol 2)": pickle.dumps(list(range(4_000_000)), 2),
        "3M 1-tuples (protocol 4)": pickle.dumps([(i,) for i in range(3_000_000)], 4),
        "1.5M 4-deep lists (protocol 4)": pickle.dumps([[[[i]]] for i in range(1_500_000)], 4),
        "20,000 byte strings of 1 KB (protocol 4)": pickle.dumps(
            [bytes([i % 256]) * 1000 + i.to_bytes(4, "little") for i in range(20_000)], 4),
    }
    hostile = {  # one-byte opcodes that each change what the scan tracks
        "MARK/POP_MARK": b"\x80\x02" + b"(1" * 10_000_000 + b"N.",
        "NONE/POP": b"\x80\x02" + b"N0" * 10_000_000 + b"N.",
        "DUP/POP": b"\x80\x02N" + b"20" * 10_000_000 + b".",
        "MEMOIZE/POP of one value": b"\x80\x04N" + b"\x94" * 20_000_000 + b".",
        "empty tuples in marks": b"\x80\x02" + b"(t0" * 6_666_666 + b"N.",
        "BINGET/POP": b"\x80\x02N\x94" + b"h\x000" * 6_666_666 + b".",
    }
    corpus = REPO.parent / "shared" / "corpus" / "mimickit"
    shapes = [(name, data, True) for name, data in honest.items()]
    shapes += [(f"hostile: 20 MB of {name}", data, False) for name, data in hostile.items()]
    shapes += [(f"corpus {path.name} (mean of 50)", path.read_bytes(), True)
               for path in sorted(corpus.glob("*.pkl"))]
    rows, slowest = [], float("inf")
    for name, data, loadable in shapes:
        rounds = 50 if name.startswith("corpus") else 1
        compiled = _cpu(lambda data=data: scan(data), rounds)  # type: ignore[misc]
        walk = _cpu(lambda data=data: scan_reference(data), rounds)  # type: ignore[misc]
        loads = (f"{_cpu(lambda data=data: pickle.loads(data), rounds):.3f} s"  # type: ignore[misc]
                 if loadable else "–")
        speed = len(data) / max(compiled, 1e-9) / 1e6
        slowest = min(slowest, speed)
        rows.append([name, f"{len(data) / 1e6:.1f} MB", f"{compiled:.3f} s", f"{speed:,.0f}",
                     f"{walk:.2f} s", f"{walk / max(compiled, 1e-9):,.0f}×", loads])
    report.row(f"pickle pre-scan, slowest stream (compiled: {COMPILED})",
               f"{slowest:,.0f} MB/s", "≥ 20 MB/s on any opcode stream", slowest >= 20)
    report.table(["pickle", "size", "compiled scan (CPU)", "MB/s", "Python walk", "ratio",
                  "pickle.loads"], rows)


if __name__ == "__main__":
    result = Report("hostile", "hostile files: cost per reader, pickle scan speed")
    result.peer("pickle.loads", f"CPython {sys.version.split()[0]} (beside the scan)")
    readers(result)
    pickle_scan(result)
    result.finish()
