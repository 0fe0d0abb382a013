"""Batch verbs a new user runs on a real folder: files of no known format are skipped and
counted apart, Ctrl-C prints one line (issue 25)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from seqfiles import V4_ALL

from .dask_helpers import make_dataset


def _motionkit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "motionkit", *args], capture_output=True,
                          text=True, timeout=180)


def test_batch_validate_skips_files_of_no_known_extension(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "sub").mkdir(parents=True)
    (data / "walk.seq").write_text(V4_ALL)
    (data / "sub" / "run.seq").write_text(V4_ALL)
    (data / "SOURCES.md").write_text("# where these came from\n")
    (data / "sub" / "mesh.obj").write_text("v 0 0 0\n")
    done = _motionkit("batch", "validate", str(data), "--out", str(tmp_path / "report"),
                      "-j", "1")
    assert done.returncode == 0, done.stderr
    assert "2 file(s): 0 failed, 2 ok" in done.stderr
    assert "2 skipped (no known extension: .md, .obj)" in done.stderr
    assert done.stdout == ""


def test_batch_of_only_unknown_files_says_so(tmp_path: Path) -> None:
    (tmp_path / "SOURCES.md").write_text("# notes\n")
    done = _motionkit("batch", "validate", str(tmp_path), "--out", str(tmp_path / "r"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "known format" in done.stderr


def test_ctrl_c_in_a_batch_prints_one_line(tmp_path: Path) -> None:
    """Ctrl-C on a terminal signals the whole process group: the command, its local
    cluster's workers and their sandbox children. Only one line may come of it."""
    make_dataset(tmp_path / "in", 400, seed=3)
    out = tmp_path / "out"
    batch = subprocess.Popen(
        [sys.executable, "-m", "motionkit", "batch", "convert", str(tmp_path / "in"), "--out",
         str(out), "--to", "traj", "-j", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while len(list(out.rglob("*.traj"))) < 5:  # the cluster is up and working
            assert time.monotonic() < deadline and batch.poll() is None
            time.sleep(0.01)
        os.killpg(batch.pid, signal.SIGINT)  # what the terminal does
        _, stderr = batch.communicate(timeout=120)
    finally:
        if batch.poll() is None:
            batch.kill()  # this test's own process, by its id
            batch.wait()
    assert batch.returncode == 130
    assert stderr == "motionkit: interrupted\n"
