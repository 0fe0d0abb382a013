"""Batch verbs over LeRobot dataset folders, ``convert --into`` options and lost tasks
(review B, findings 1-3 and 6): a dataset folder is batched, never skipped; a file
rewritten inside it is seen by a rerun; a reader's -O reaches the reader only, not the
dataset's writer; of a lost chunk of files only the one that kills its worker is lost."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import cast

import numpy as np
import polars as pl
import pytest

import motionkit as mk
from conftest import corpus_file
from motionkit.dataset.batch import Job, _unchanged, run_batch
from motionkit.dataset.files import Item, expand, stamp

pytestmark = pytest.mark.corpus

EPISODES_META = Path("meta", "episodes", "chunk-000", "file-000.parquet")
TASKS = Path("meta", "tasks.parquet")


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


def _upper_case_tasks(arm: Path) -> list[Path]:
    """Rewrite the tasks table and the episodes' metadata in place (the same files, no
    entry added or removed in any folder) with the tasks upper-cased; the files."""
    upper = pl.element().str.to_uppercase()
    changes = {TASKS: pl.col("task").str.to_uppercase(),
               EPISODES_META: pl.col("tasks").list.eval(upper)}
    for name, change in changes.items():
        table = pl.read_parquet(arm / name).with_columns(change)
        with open(arm / name, "r+b") as handle:
            handle.truncate()
            table.write_parquet(handle)
    return [arm / name for name in changes]


def test_a_file_rewritten_inside_a_dataset_is_redone_on_a_rerun(tmp_path: Path) -> None:
    """Neither the output check nor the catalog's resume check goes by the folder's own
    time, which a file rewritten inside it does not change (finding 3); an untouched
    dataset is still skipped without being read."""
    arm = _dataset(tmp_path / "ds")
    out = tmp_path / "info"
    args = ("batch", "info", str(arm), "--out", str(out), "--engine", "local", "-j", "1")
    first = _motionkit(*args)
    assert first.returncode == 0 and "1 written" in first.stderr, first.stderr
    written = out / "arm7_tiny.json"
    assert "pick the red cube" in written.read_text()
    folders = {p: p.stat().st_mtime_ns for p in (arm, *arm.rglob("*")) if p.is_dir()}
    later = written.stat().st_mtime_ns + 10**9  # surely after the output, at any mtime grain
    for rewritten in _upper_case_tasks(arm):
        os.utime(rewritten, ns=(later, later))
    assert {p: p.stat().st_mtime_ns for p in folders} == folders  # no folder's time moved
    again = _motionkit(*args)
    assert again.returncode == 0 and "1 written" in again.stderr, again.stderr
    assert "PICK THE RED CUBE" in written.read_text()
    table = pl.read_parquet(out / "catalog.parquet")
    assert table["task"].to_list() == ["PICK THE RED CUBE", "PLACE THE CUBE IN THE BIN"]
    assert table["mtime_ns"].to_list() == [later, later]
    job = Job("info", out)
    assert [index for index, _ in _unchanged(job, expand([str(arm)]))] == [0]
    size = sum(p.stat().st_size for p in arm.rglob("*") if p.is_file())
    assert stamp(arm) == (size, later) and table["size"].to_list() == [size, size]


def test_into_gives_a_reader_s_option_to_the_reader_alone(tmp_path: Path) -> None:
    """``batch convert --into -O time=log``: ``time`` is the bag reader's, so the dataset
    written at the end gets only the writer's share of -O (finding 2), the same dataset
    as writing the bags read with time=log directly; an -O key the dataset's writer
    cannot take is refused before any worker runs."""
    from motionkit.formats.lerobot.write import write_episodes
    from motionkit.ops import sync

    bags = tmp_path / "bags"
    shutil.copytree(corpus_file("episodes", "bags"), bags)
    sources = [bags / "joint_states_ros1.bag", bags / "joint_states_ros2" / "joint_states_ros2.mcap"]
    dataset = tmp_path / "dataset"
    done = _motionkit("batch", "convert", str(bags), "--out", str(tmp_path / "work"), "--into",
                      str(dataset), "--fps", "30", "-O", "task=x", "-O", "time=log", "--lossy",
                      "--engine", "local", "-j", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 file(s): 2 converted, 0 failed" in done.stderr, done.stderr
    direct = tmp_path / "direct"
    with pytest.warns(mk.MotionkitWarning, match="dropped"):
        write_episodes(direct, [sync(mk.read(s, time="log"), 30, zero=True) for s in sources],
                       task="x", lossy=True)
    lerobot = mk.formats.registry.by_name("lerobot").load()
    ours, theirs = lerobot.read_episodes(dataset), lerobot.read_episodes(direct)
    assert len(ours) == len(theirs) == 2
    for mine, reference in zip(ours, theirs, strict=True):
        assert set(mine.tracks) == set(reference.tracks) and mine.meta["task"] == "x"
        for name, track in reference.tracks.items():
            np.testing.assert_array_equal(mine.tracks[name].data, track.data)
    refused = _motionkit("batch", "convert", str(bags), "--out", str(tmp_path / "w2"), "--into",
                         str(tmp_path / "d2"), "--fps", "30", "-O", "lossy=true", "--engine",
                         "local", "-j", "1")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert "lossy" in refused.stderr and not (tmp_path / "w2").exists()


class _Killing:
    """An engine that runs tasks in this process, but loses every task holding the file
    named ``killer`` (as a worker that dies reading it would be, on any engine)."""

    slots = 1

    def __init__(self, killer: str) -> None:
        self.killer = killer
        self.tasks: list[tuple[Callable[..., object], tuple[object, ...]]] = []
        self.sizes: list[int] = []  # the files of each task run

    def submit(self, function: Callable[..., object], *args: object) -> int:
        self.tasks.append((function, args))
        return len(self.tasks) - 1

    def completed(self) -> Iterator[tuple[int, object]]:
        from motionkit.dataset.engines import Lost

        done = 0
        while done < len(self.tasks):
            function, args = self.tasks[done]
            files = cast("list[Item]", args[1])
            self.sizes.append(len(files))
            yield done, (Lost("a worker died") if any(f.source.name == self.killer for f in files)
                         else function(*args))
            done += 1

    def cancel(self) -> None:
        """Nothing runs in the background."""

    def close(self) -> None:
        """Nothing was started."""


def test_a_lost_chunk_is_redone_a_file_at_a_time(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A chunk of several files whose task was lost is redone one file per task, so only
    the file that kills its worker is reported lost, whatever the engine (finding 6)."""
    from motionkit.dataset import engines

    data = tmp_path / "data"
    data.mkdir()
    for number in range(40):
        (data / f"w{number:02d}.tum").write_text(f"0 {number} 0 0 0 0 0 1\n1 1 0 0 0 0 0 1\n")
    engine = _Killing("w07.tum")
    monkeypatch.setattr(engines, "open_engine", lambda *args: contextlib.nullcontext(engine))
    outcomes = run_batch(Job("validate", tmp_path / "out"), expand([str(data)]), workers=1)
    assert engine.sizes[0] > 1  # the files went in chunks
    failed = [Path(o.source).name for o in outcomes if o.status == "failed"]
    assert failed == ["w07.tum"]
    assert [o.error for o in outcomes if o.status == "failed"] == ["task lost: a worker died"]
    assert sum(o.status == "ok" for o in outcomes) == 39


def test_batch_convert_of_a_dataset_of_several_episodes_chooses_one(tmp_path: Path) -> None:
    """An input is written as one motion, so a dataset of two episodes is refused rather
    than written as its episode 0 alone; -R episode=N chooses the one to write."""
    arm = _dataset(tmp_path / "ds")
    whole = _motionkit("batch", "convert", str(arm), "--out", str(tmp_path / "o1"), "--to",
                       "lerobot", "--engine", "local", "-j", "1")
    assert whole.returncode == 2 and "-R episode=N" in whole.stdout, whole.stdout + whole.stderr
    assert not (tmp_path / "o1" / "arm7_tiny").exists()
    one = _motionkit("batch", "convert", str(arm), "--out", str(tmp_path / "o2"), "--to",
                     "lerobot", "-R", "episode=1", "--engine", "local", "-j", "1")
    assert one.returncode == 0, one.stdout + one.stderr
    lerobot = mk.formats.registry.by_name("lerobot").load()
    [written] = lerobot.read_episodes(tmp_path / "o2" / "arm7_tiny")
    second = lerobot.read_episodes(arm)[1]
    assert written.frames == second.frames and written.meta["task"] == second.meta["task"]
