"""Run a read or a CLI command in a child process under a memory limit and a timeout."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CHILD = Path(__file__).with_name("hostile_child.py")
#: Address space a child may use beyond the budget under test: the interpreter with NumPy,
#: polars and every format module already maps ~0.5 GB before reading anything.
BASE_ADDRESS_SPACE = 1536 * 1024 * 1024
MB = 1024 * 1024


def _hung(cpu_seconds: float) -> float:
    """A wall-clock limit that only means "hung": far beyond the CPU bound, even on a
    machine busy with other work."""
    return 3 * cpu_seconds + 60


def memory_goal(size: int) -> int:
    """Bytes a read may add to the process: 50 times the file's size plus 100 MB."""
    return 50 * size + 100 * MB


def _limited(limit: int) -> Any:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", POLARS_MAX_THREADS="1",
               MALLOC_ARENA_MAX="2", PYTHONDONTWRITEBYTECODE="1")
    return env


def run_child(spec: dict[str, Any], size: int, timeout: float) -> dict[str, Any]:
    """The child's JSON report, plus its return code; a crash or a hang is reported too.

    TIMEOUT is the CPU time the work may take (the test asserts it); the wall-clock limit
    is far beyond it."""
    limit = BASE_ADDRESS_SPACE + memory_goal(size)
    argument = json.dumps(spec)
    with tempfile.TemporaryDirectory() as folder:
        if len(argument) > 50_000:  # beyond one argument's length limit: pass a file
            holder = Path(folder) / "spec.json"
            holder.write_text(argument, encoding="utf-8")
            argument = f"@{holder}"
        try:
            done = subprocess.run([sys.executable, str(CHILD), argument],
                                  capture_output=True, text=True, timeout=_hung(timeout),
                                  preexec_fn=_limited(limit), env=_env())
        except subprocess.TimeoutExpired:
            return {"outcome": "timeout", "returncode": None}
    lines = done.stdout.strip().splitlines()
    try:
        report: dict[str, Any] = json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        report = {"outcome": "crash", "stderr": done.stderr[-2000:]}
    report["returncode"] = done.returncode
    return report


@dataclass
class CliResult:
    returncode: int
    stdout: str
    stderr: str


def run_cli(args: list[str], size: int, timeout: float = 30.0) -> CliResult:
    """``motionkit ARGS`` in a child under the memory limit; a hang fails loudly."""
    limit = BASE_ADDRESS_SPACE + memory_goal(size)
    done = subprocess.run([sys.executable, "-m", "motionkit", *args], capture_output=True,
                          text=True, timeout=_hung(timeout), preexec_fn=_limited(limit), env=_env(),
                          errors="backslashreplace")
    return CliResult(done.returncode, done.stdout, done.stderr)
