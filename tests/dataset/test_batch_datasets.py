"""Batch verbs over LeRobot dataset folders and ``convert --into`` options (review B,
findings 1-3): a dataset folder is batched, never skipped; a file rewritten inside it
is seen by a rerun; a reader's -O reaches the reader only, not the dataset's writer."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from conftest import corpus_file

pytestmark = pytest.mark.corpus



def _motionkit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "motionkit", *args], capture_output=True,
                          text=True, timeout=300)


def _dataset(folder: Path) -> Path:
    """A writable copy of the corpus's two-episode LeRobot dataset in ``folder``."""
    arm = folder / "arm7_tiny"
    shutil.copytree(corpus_file("episodes", "lerobot", "arm7_tiny"), arm)
    for root, dirs, files in os.walk(arm):
        for name in (*dirs, *files):
            os.chmod(os.path.join(root, name), 0o755 if name in dirs else 0o644)
    return arm


def test_batch_validate_and_info_take_a_dataset_folder(tmp_path: Path) -> None:
    """A dataset folder beside other files is one item of the batch, not "skipped (no
    known extension)"; given alone it is batched too (finding 1)."""
    data = tmp_path / "ds"
    arm = _dataset(data)
    shutil.copy(corpus_file("parc", "ms", "sfu.pkl"), data / "sfu.pkl")
    (data / "SOURCES.md").write_text("# notes\n")
    done = _motionkit("batch", "validate", str(data), "--out", str(tmp_path / "report"),
                      "--engine", "local", "-j", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 file(s): 0 failed, 2 ok; 1 skipped (no known extension: .md)" in done.stderr
    table = pl.read_parquet(tmp_path / "report" / "catalog.parquet")
    episodes = table.filter(pl.col("path") == str(arm))
    assert episodes["episode"].to_list() == [0, 1] and set(episodes["status"]) == {"ok"}
    alone = _motionkit("batch", "info", str(arm), "--out", str(tmp_path / "info"),
                       "--engine", "local", "-j", "1")
    assert alone.returncode == 0, alone.stdout + alone.stderr
    assert "1 file(s): 0 failed, 1 written" in alone.stderr
    assert json.loads((tmp_path / "info" / "arm7_tiny.json").read_text())["format"] == "lerobot"
