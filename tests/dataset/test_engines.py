"""The three batch engines (local processes, Dask, Ray): the same bytes from each, on the
corpus; real clusters started on 127.0.0.x and stopped by PID; a worker killed mid-batch
on each engine loses nothing; several bags into one LeRobot dataset (issue 30, 26).

The Dask scheduler with two workers and its kill are ``test_batch.py``'s
(``test_killing_a_worker_mid_batch_loses_nothing``); Ray's tests skip without Ray unless
``MOTIONKIT_REQUIRE_RAY=1`` (set by .ci/run, where Ray comes from the lock)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import motionkit as mk
from conftest import corpus_file
from motionkit.dataset.batch import Job, run_batch
from motionkit.dataset.engines import engine_for
from motionkit.dataset.files import expand
from motionkit.errors import MotionkitError

from .dask_helpers import RAY_TEST_ENV, RayHead, descendants, make_dataset, need_ray, ray_head

#: Corpus files of several formats a batch rewrites in their own format.
CORPUS = [("choreonoid", "SR1WalkPattern1.seq"), ("choreonoid", "SR1WalkPattern3.seq"),
          ("bvh", "example.bvh"), ("bvh", "sinusoidal.bvh"), ("parc", "ms", "sfu.pkl"),
          ("evo", "fr2_desk_groundtruth.txt"),
          ("evo", "KITTI_00_gt.txt")]


def _motionkit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "motionkit", *args], capture_output=True,
                          text=True, timeout=300)


def test_the_engine_is_the_one_named_or_the_one_its_address_speaks() -> None:
    assert engine_for("local", None) == "local"
    assert engine_for(None, "ray://head:10001") == "ray"
    assert engine_for(None, "auto") == "ray"
    assert engine_for(None, "tcp://head:8786") == "dask"
    assert engine_for("ray", "head:6379") == "ray"
    for engine, address in (("local", "tcp://head:8786"), ("ray", "tcp://head:8786"),
                            ("spark", None)):
        with pytest.raises(MotionkitError):
            engine_for(engine, address)


@pytest.fixture(scope="module")
def corpus_input(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Corpus files of six formats beside 60 generated ones and four broken ones."""
    root = tmp_path_factory.mktemp("engines") / "in"
    make_dataset(root / "made", 60, seed=7)
    for parts in CORPUS:
        target = root / "corpus" / parts[0] / parts[-1]
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(corpus_file(*parts), target)
    return root


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != "catalog.parquet"}


@pytest.mark.corpus
def test_the_three_engines_write_the_same_bytes_and_rows(corpus_input: Path,
                                                         tmp_path: Path) -> None:
    need_ray()
    items = expand([str(corpus_input)])
    items = [item for item in items if item.source.suffix != ".md"]
    written: dict[str, dict[str, dict[str, bytes]]] = {}
    rows: dict[str, dict[str, pl.DataFrame]] = {}
    for engine in ("local", "dask", "ray"):
        for op in ("convert", "info"):
            out = tmp_path / engine / op
            outcomes = run_batch(Job(op, out, lossy=True), items, workers=2, engine=engine)
            assert sum(o.status == "failed" for o in outcomes) == 4, engine  # the broken ones
            written.setdefault(op, {})[engine] = _tree(out)
            rows.setdefault(op, {})[engine] = pl.read_parquet(out / "catalog.parquet")
    for op in ("convert", "info"):
        local = written[op]["local"]
        assert len(local) >= 60 + len(CORPUS) - 1, sorted(local)
        for engine in ("dask", "ray"):
            assert written[op][engine] == local, (op, engine)
            # the catalog holds no time of the run: every column agrees
            assert rows[op][engine].equals(rows[op]["local"]), (op, engine)


def test_the_per_file_limits_are_the_same_on_every_engine(tmp_path: Path) -> None:
    """A model of 100,000 boxes takes seconds to read: over a 1 s limit it fails alone,
    with the same line on each engine, and the trajectory beside it is read."""
    need_ray()
    from motionkit.dataset.sandbox import Limits

    inputs = tmp_path / "in"
    inputs.mkdir()
    boxes = '<geom type="box" size="0.1 0.2 0.3"/>' * 100_000
    (inputs / "boxes.xml").write_text(f'<mujoco><worldbody><body name="b"><freejoint/>{boxes}'
                                      "</body></worldbody></mujoco>")
    shutil.copy(corpus_file("evo", "fr2_desk_groundtruth.txt"), inputs / "w.tum")
    seen = {}
    for engine in ("local", "dask", "ray"):
        outcomes = run_batch(Job("validate", tmp_path / engine, limits=Limits(1.0, None)),
                             expand([str(inputs)]), workers=1, engine=engine)
        seen[engine] = [(Path(o.source).name, o.status, o.error) for o in outcomes]
    assert seen["local"] == [("boxes.xml", "failed", "took longer than 1 s (--timeout); stopped"),
                             ("w.tum", "ok", None)]
    assert seen["dask"] == seen["ray"] == seen["local"]


def _wait_for_outputs(out: Path, count: int, batch: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 180
    while len(list(out.rglob("*.traj"))) < count:
        if batch.poll() is not None:
            pytest.fail(f"the batch ended early: {batch.communicate()}")
        assert time.monotonic() < deadline
        time.sleep(0.01)


@pytest.fixture
def big_dataset(tmp_path: Path) -> tuple[Path, list[Path], list[Path]]:
    good, broken = make_dataset(tmp_path / "in", 300, seed=2)
    return tmp_path / "in", good, broken


def _finished_whole(batch: subprocess.Popen[str], out: Path, good: list[Path],
                    broken: list[Path]) -> None:
    stdout, stderr = batch.communicate(timeout=300)
    assert batch.returncode == 2, stderr
    assert len(stdout.splitlines()) == len(broken), stdout  # only the broken files failed
    assert len(list(out.rglob("*.traj"))) == len(good)
    catalog = pl.read_parquet(out / "catalog.parquet")
    assert catalog.filter(pl.col("status") == "ok").height == len(good)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_killing_a_local_worker_mid_batch_loses_nothing(
        big_dataset: tuple[Path, list[Path], list[Path]], tmp_path: Path) -> None:
    root, good, broken = big_dataset
    out = tmp_path / "out"
    batch = subprocess.Popen(
        [sys.executable, "-m", "motionkit", "batch", "convert", str(root), "--out", str(out),
         "--to", "traj", "--engine", "local", "-j", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for_outputs(out, 20, batch)
        workers = [pid for pid, command in descendants(batch.pid)
                   if "spawn_main" in command and "resource_tracker" not in command]
        assert len(workers) == 2, workers
        subprocess.run(["kill", "-KILL", str(workers[0])], check=True)  # by its PID
        assert len(list(out.rglob("*.traj"))) < len(good)  # killed in the middle
        _finished_whole(batch, out, good, broken)
    finally:
        if batch.poll() is None:
            batch.kill()
            batch.wait()


@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RayHead]:
    need_ray()
    with ray_head(1, tmp_path_factory.mktemp("ray") / "head.log") as head:
        yield head


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_killing_a_ray_worker_mid_batch_loses_nothing(
        ray_cluster: RayHead, big_dataset: tuple[Path, list[Path], list[Path]],
        tmp_path: Path) -> None:
    """The batch joins a running Ray head (one CPU: one worker process) through Ray Client
    (``--scheduler ray://…``); its worker is killed; Ray reruns the task on a new one."""
    root, good, broken = big_dataset
    out = tmp_path / "out"
    batch = subprocess.Popen(
        [sys.executable, "-m", "motionkit", "batch", "convert", str(root), "--out", str(out),
         "--to", "traj", "--scheduler", ray_cluster.client],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **RAY_TEST_ENV})
    try:
        _wait_for_outputs(out, 20, batch)
        working = [pid for pid, command in descendants(ray_cluster.process.pid)
                   if command.startswith("ray::work_chunk")]
        assert working  # the head's worker, at work (one CPU: one at a time)
        subprocess.run(["kill", "-KILL", str(working[0])], check=True)  # by its PID
        assert len(list(out.rglob("*.traj"))) < len(good)
        _finished_whole(batch, out, good, broken)
    finally:
        if batch.poll() is None:
            batch.kill()
            batch.wait()


@pytest.mark.corpus
def test_a_folder_of_bags_into_one_lerobot_dataset(tmp_path: Path) -> None:
    """``batch convert --into``: each bag is read and synced on a worker, the dataset of
    both bags' episodes is written at the end; the same as writing the synced bags as one
    dataset directly."""
    from motionkit.formats.lerobot.write import write_episodes
    from motionkit.ops import sync

    bags = tmp_path / "bags"
    shutil.copytree(corpus_file("episodes", "bags"), bags)
    sources = [bags / "joint_states_ros1.bag", bags / "joint_states_ros2" / "joint_states_ros2.mcap"]
    dataset = tmp_path / "dataset"
    done = _motionkit("batch", "convert", str(bags), "--out", str(tmp_path / "work"), "--into",
                      str(dataset), "--fps", "30", "-O", "task=move the arm", "-O",
                      "state=/joint_states", "-O", "action=/cmd", "--lossy", "--engine", "local",
                      "-j", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    # the ROS 2 bag's metadata.yaml goes with its .mcap; readback.jsonl is no motion
    assert "2 file(s): 2 converted, 0 failed" in done.stderr, done.stderr
    assert "1 skipped (no known extension: .jsonl)" in done.stderr, done.stderr
    assert not (tmp_path / "work" / ".episodes").exists()
    direct = tmp_path / "direct"
    with pytest.warns(mk.MotionkitWarning, match="dropped topic /tf"):
        write_episodes(direct, [sync(mk.read(s), 30, zero=True) for s in sources],
                       task="move the arm", state="/joint_states", action="/cmd", lossy=True)
    ours = mk.formats.registry.by_name("lerobot").load().read_episodes(dataset)
    theirs = mk.formats.registry.by_name("lerobot").load().read_episodes(direct)
    assert len(ours) == len(theirs) == 2
    for mine, reference in zip(ours, theirs, strict=True):
        assert set(mine.tracks) == set(reference.tracks)
        for name, track in reference.tracks.items():
            np.testing.assert_array_equal(mine.tracks[name].data, track.data)
            assert mine.tracks[name].labels == track.labels
        assert mine.meta.get("task") == reference.meta.get("task") == "move the arm"
    catalog = pl.read_parquet(tmp_path / "work" / "catalog.parquet")
    assert catalog.height == 2 and set(catalog["status"]) == {"ok"}
    refused = _motionkit("batch", "convert", str(bags / "*.bag"), "--out", str(tmp_path / "w2"),
                         "--into", str(tmp_path / "d2"), "--to", "tum", "--engine", "local")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1



def _dies() -> None:
    """A task that kills its worker process (as a crash in a reader's C code would)."""
    os._exit(9)


def _answers(value: int) -> int:
    return value * 2


def test_a_local_task_that_keeps_killing_its_worker_is_lost_and_the_rest_done() -> None:
    """The pool is restarted after each death; the task is given up after three deaths in
    a row, with one line, while the tasks beside it are done."""
    from motionkit.dataset.engines import ATTEMPTS, LocalEngine, Lost

    engine = LocalEngine(1)
    try:
        first = engine.submit(_answers, 1)
        poison = engine.submit(_dies)
        results = dict(engine.completed())
    finally:
        engine.close()
    assert results[first] == 2
    lost = results[poison]
    assert isinstance(lost, Lost) and f"{ATTEMPTS} times" in lost.reason


def _outlives_the_killer(flags: str) -> str:
    """A task still running when the task beside it kills its worker: it says it has
    started, waits until the killer is about to die, then works on for a while."""
    Path(flags, "started").touch()
    _wait_for(Path(flags, "dying"))
    time.sleep(2)
    return "done"


def _kills_once_the_other_runs(flags: str) -> None:
    """Kills its worker, but only once the other task is running beside it."""
    _wait_for(Path(flags, "started"))
    Path(flags, "dying").touch()
    os._exit(9)


def _wait_for(path: Path) -> None:
    for _ in range(6000):  # at most a minute
        if path.exists():
            return
        time.sleep(0.01)


def test_a_task_running_beside_a_local_killer_is_never_lost(tmp_path: Path) -> None:
    """A broken pool cannot say which task killed it: the tasks that were on it are
    rerun alone, so only the killer is charged and lost (review B, finding 6)."""
    from motionkit.dataset.engines import ATTEMPTS, LocalEngine, Lost

    engine = LocalEngine(2)
    try:
        innocent = engine.submit(_outlives_the_killer, str(tmp_path))
        killer = engine.submit(_kills_once_the_other_runs, str(tmp_path))
        results = dict(engine.completed())
    finally:
        engine.close()
    assert results[innocent] == "done"
    lost = results[killer]
    assert isinstance(lost, Lost) and f"{ATTEMPTS} times" in lost.reason


class _FlakyRay:
    """A stand-in for the ray module whose Ray Client server refuses the first ``refusals``
    starts, as a loaded head's can ("Initialization failure from server")."""

    def __init__(self, refusals: int) -> None:
        self.refusals, self.inits, self.shutdowns = refusals, 0, 0

    def init(self, **_: object) -> None:
        self.inits += 1
        if self.inits <= self.refusals:
            raise ConnectionAbortedError("Initialization failure from server")

    def shutdown(self) -> None:
        self.shutdowns += 1


def test_joining_a_cluster_tries_again_after_a_refused_start(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from motionkit.dataset import engines

    monkeypatch.setattr(engines.time, "sleep", lambda _: None)
    flaky = _FlakyRay(2)
    engines._join(flaky, "ray://127.0.0.1:1")  # type: ignore[arg-type]
    assert (flaky.inits, flaky.shutdowns) == (3, 2)
    with pytest.raises(ConnectionAbortedError):
        engines._join(_FlakyRay(engines.JOIN_ATTEMPTS), "ray://127.0.0.1:1")  # type: ignore[arg-type]
