"""What every bench measures and records, the same way: CPU and wall time, the load, the
thread settings, each peer's exact configuration, and the goal beside each figure.

A bench script builds one ``Report``, adds rows with ``Report.row`` and calls
``Report.finish()``, which prints its section and writes ``bench/out/<script>.md``;
``bench/_results.py`` (run by ``make bench``) joins the sections into ``bench/RESULTS.md``.
Times are CPU seconds of this process (all its threads) unless a row says wall.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "POLARS_MAX_THREADS", "RAYON_NUM_THREADS")


@dataclass(frozen=True)
class Timing:
    """One run: CPU seconds (every thread of the process, or of the child) and wall seconds."""

    cpu: float
    wall: float
    peak_mb: float = float("nan")


def timed(func: Callable[[], object]) -> Timing:
    """Run ``func`` once in this process."""
    cpu, wall = time.process_time(), time.perf_counter()
    func()
    return Timing(time.process_time() - cpu, time.perf_counter() - wall)


def timed_process(command: Sequence[str], env: Mapping[str, str] | None = None) -> Timing:
    """Run a whole command; its CPU time and peak memory are the kernel's accounting of that
    child alone (``wait4``), not of every child so far."""
    wall = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                             env=None if env is None else {**os.environ, **env})
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - wall
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise subprocess.CalledProcessError(child.returncode, list(command))
    return Timing(usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024)  # KiB on Linux


def interleaved(candidates: Mapping[str, Callable[[], Timing]],
                rounds: int = 3) -> dict[str, list[Timing]]:
    """Each candidate once per round, in turn, so that load from elsewhere hits all alike."""
    runs: dict[str, list[Timing]] = {name: [] for name in candidates}
    for _ in range(rounds):
        for name, run in candidates.items():
            runs[name].append(run())
    return runs


def best(runs: Sequence[Timing]) -> Timing:
    """The run with the least CPU time (the least disturbed one)."""
    return min(runs, key=lambda run: run.cpu)


def span(values: Sequence[float], digits: int = 2, unit: str = "") -> str:
    """``low–high`` of some figures (or one figure), for a table cell."""
    low, high = min(values), max(values)
    text = f"{low:.{digits}f}" if f"{low:.{digits}f}" == f"{high:.{digits}f}" \
        else f"{low:.{digits}f}–{high:.{digits}f}"
    return text + unit


def environment() -> list[str]:
    """The facts a figure depends on: machine, load, thread settings, versions."""
    lines = [f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
             f"Python {platform.python_version()}, {platform.system()}",
             "load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())]
    threads = [f"{name}={os.environ[name]}" for name in THREAD_VARIABLES if name in os.environ]
    lines.append("thread variables: " + (", ".join(threads) or "none set"))
    try:
        from threadpoolctl import threadpool_info
        pools = [f"{pool['internal_api']} {pool['num_threads']}" for pool in threadpool_info()]
        lines.append("thread pools: " + (", ".join(pools) or "none loaded yet"))
    except ImportError:
        pass
    return lines


@dataclass
class Report:
    """One bench's section of RESULTS.md."""

    script: str
    title: str
    peers: dict[str, str] = field(default_factory=dict)
    rows: list[tuple[str, str, str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    tables: list[str] = field(default_factory=list)
    started: list[str] = field(default_factory=environment)  # at the start, not the end

    def peer(self, name: str, configuration: str) -> None:
        """The exact peer: version, extras, options, thread settings."""
        self.peers[name] = configuration

    def row(self, work: str, figure: str, goal: str, met: bool | None) -> None:
        """One measured figure with its goal; ``met`` None where no goal applies."""
        verdict = {True: "met", False: "**not met**", None: "–"}[met]
        self.rows.append((work, figure, goal, verdict))
        print(f"  {work}: {figure} (goal {goal}: {verdict})", flush=True)

    def table(self, header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
        """A table of details under the goals."""
        lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        self.tables.append("\n".join(lines))

    def note(self, text: str) -> None:
        self.notes.append(text)

    def finish(self) -> None:
        """Print the section and write it to ``bench/out/<script>.md``."""
        lines = [f"## `bench/{self.script}.py` — {self.title}", ""]
        lines += [f"- {line}" for line in self.started]
        lines += [f"- peer: {name}: {config}" for name, config in self.peers.items()]
        lines += ["", "| work | measured | goal | |", "| --- | --- | --- | --- |"]
        lines += ["| " + " | ".join(row) + " |" for row in self.rows]
        for table in self.tables:
            lines += ["", table]
        for note in self.notes:
            lines += ["", note]
        text = "\n".join(lines) + "\n"
        OUT.mkdir(exist_ok=True)
        (OUT / f"{self.script}.md").write_text(text)
        sys.stdout.write("\n" + text)
