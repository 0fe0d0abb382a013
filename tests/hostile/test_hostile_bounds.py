"""Hostile files end in a motionkit error (or a correct read) within time and memory.

Every case runs in a child process under an address-space limit and a timeout, so a
crash, a runaway allocation or a hang fails the test instead of the test run. Memory is
checked against the goal: at most 50 times the file's size plus 100 MB above the
interpreter's own footprint. Work is bounded in the child's CPU seconds, which a busy
machine does not inflate; the wall-clock timeout only means "hung".
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile_files import CASES, CODE_CASES, Case
from hostile_run import memory_goal, run_child


def _check(report: dict[str, object], expect: str, size: int, seconds: float) -> None:
    assert report["returncode"] == 0, report  # a negative code is a signal (segfault, kill)
    outcome = report["outcome"]
    assert outcome in ("ok", "motionkit"), report  # never an exception outside the family
    if expect != "either":
        assert outcome == ("ok" if expect == "ok" else "motionkit"), report
    assert float(report["cpu_seconds"]) < seconds, report  # type: ignore[arg-type]
    grown = (int(report["peak_kb"]) - int(report["base_kb"])) * 1024  # type: ignore[call-overload]
    assert grown <= memory_goal(size), report


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_hostile_file_is_bounded(case: Case, tmp_path: Path) -> None:
    path = tmp_path / case.filename
    data = case.make()
    path.write_bytes(data)
    size = len(data) + (case.beside(tmp_path) if case.beside else 0)
    report = run_child({**case.call, "path": str(path)}, size, case.seconds)
    _check(report, case.expect, size, case.seconds)


@pytest.mark.parametrize("name,filename,make,call", CODE_CASES,
                         ids=[case[0] for case in CODE_CASES])
def test_no_code_runs(name: str, filename: str, make: object, call: dict[str, object],
                      tmp_path: Path) -> None:
    sentinel = tmp_path / "sentinel"
    path = tmp_path / filename
    data = make(str(sentinel))  # type: ignore[operator]
    path.write_bytes(data)
    report = run_child({**call, "path": str(path)}, len(data), 10.0)
    assert report["returncode"] == 0 and report["outcome"] in ("ok", "motionkit"), report
    assert not sentinel.exists()
