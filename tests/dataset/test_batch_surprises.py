"""Batch verbs a new user runs on a real folder: files of no known format are skipped and
counted apart, Ctrl-C prints one line (issue 25)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from seqfiles import V4_ALL

from .dask_helpers import make_dataset
from .walks import noisy_pair


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


@pytest.mark.parametrize("engine", ["dask", "local"])
def test_ctrl_c_in_a_batch_prints_one_line(tmp_path: Path, engine: str) -> None:
    """Ctrl-C on a terminal signals the whole process group: the command, its local
    cluster's workers and their sandbox children. Only one line may come of it."""
    make_dataset(tmp_path / "in", 400, seed=3)
    out = tmp_path / "out"
    batch = subprocess.Popen(
        [sys.executable, "-m", "motionkit", "batch", "convert", str(tmp_path / "in"), "--out",
         str(out), "--to", "traj", "-j", "2", "--engine", engine],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while len(list(out.rglob("*.traj"))) < 5:  # the cluster is up and working
            assert time.monotonic() < deadline and batch.poll() is None
            time.sleep(0.01)
        _interrupt(batch)
    finally:
        _stop(batch)


def _interrupt(batch: subprocess.Popen[str]) -> None:
    """Ctrl-C as the terminal sends it, to the batch's process group: one line, exit 130."""
    os.killpg(batch.pid, signal.SIGINT)
    _, stderr = batch.communicate(timeout=120)
    assert batch.returncode == 130, stderr
    assert stderr == "motionkit: interrupted\n"


def _stop(batch: subprocess.Popen[str]) -> None:
    """This test's own process, killed by its id if it is still running."""
    if batch.poll() is None:
        batch.kill()
        batch.wait()


def _session(leader: int) -> list[int]:
    """The processes of the session ``leader`` started (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except (OSError, ValueError):
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if entry.isdigit() and int(fields[3]) == leader:  # field 6 of stat: the session
            found.append(int(entry))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_ctrl_c_while_the_cluster_starts_is_honoured(tmp_path: Path) -> None:
    """A Ctrl-C after the first worker process has made its folder and before any output
    is written (the cluster is starting) stops the command with one line and exit status
    130, and leaves no process behind (review of issue 25, finding 5: it was dropped, and
    the batch ran to the end)."""
    make_dataset(tmp_path / "in", 400, seed=3)
    out, scratch = tmp_path / "out", tmp_path / "tmp"
    scratch.mkdir()
    batch = subprocess.Popen(
        [sys.executable, "-m", "motionkit", "batch", "convert", str(tmp_path / "in"), "--out",
         str(out), "--to", "traj", "-j", "2"], env={**os.environ, "TMPDIR": str(scratch)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        for _ in range(120_000):  # bounded: about 120 s of polls
            # a worker process has made its Dask folder: it is starting, not yet working
            if list(scratch.glob("dask-scratch-space/worker-*")) or batch.poll() is not None:
                break
            time.sleep(0.001)
        assert batch.poll() is None and not list(out.rglob("*.traj"))  # still starting
        _interrupt(batch)  # no worker's traceback
    finally:
        _stop(batch)
    assert len(list(out.rglob("*.traj"))) < 400
    for _ in range(200):  # the workers stop after the command (bounded)
        if not _session(batch.pid):
            break
        time.sleep(0.05)
    assert _session(batch.pid) == []


def test_the_start_up_guard_restores_and_replays_the_handler() -> None:
    """The parent's own SIGINT handler is held, not ignored, while the cluster starts: a
    Ctrl-C then reaches it once start-up is over, and the handler is the one there was."""
    from motionkit.dataset.engines import _interrupt_after_start

    seen: list[int] = []

    def mine(number: int, frame: object) -> None:
        seen.append(number)

    before = signal.signal(signal.SIGINT, mine)
    try:
        with _interrupt_after_start():
            signal.raise_signal(signal.SIGINT)
            assert seen == []  # held until start-up is over
        assert seen == [signal.SIGINT] and signal.getsignal(signal.SIGINT) is mine
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        with _interrupt_after_start():
            signal.raise_signal(signal.SIGINT)
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN and seen == [signal.SIGINT]
    finally:
        signal.signal(signal.SIGINT, before)


def test_batch_convert_takes_convert_s_options(tmp_path: Path) -> None:
    import shutil

    import motionkit as mk
    from conftest import corpus_file

    body = corpus_file("choreonoid", "SR1.body")
    walks = tmp_path / "walks"
    walks.mkdir()
    for name in ("a.seq", "b.seq"):
        shutil.copy(corpus_file("choreonoid", "SR1WalkPattern1.seq"), walks / name)
    links = _motionkit("batch", "convert", str(walks), "--out", str(tmp_path / "links"),
                       "--model", str(body), "-j", "1")
    assert links.returncode == 0, links.stdout + links.stderr
    written = mk.read(tmp_path / "links" / "a.seq")
    assert "links" in written.tracks and written.tracks["links"].labels[0] == "WAIST"
    foot = _motionkit("batch", "convert", str(walks), "--out", str(tmp_path / "foot"),
                      "--model", str(body), "--to", "tum", "-O", "link=RLEG_ANKLE_R",
                      "--rate", "50", "--lossy", "-j", "1")
    assert foot.returncode == 0, foot.stdout + foot.stderr
    one = mk.read(tmp_path / "foot" / "b.tum")
    direct = tmp_path / "direct.tum"
    with pytest.warns(mk.MotionkitWarning, match="dropped"):
        mk.convert(walks / "b.seq", direct, model=body, link="RLEG_ANKLE_R", rate=50, lossy=True)
    assert one.frames == mk.read(direct).frames
    assert (tmp_path / "foot" / "b.tum").read_bytes() == direct.read_bytes()
    typo = _motionkit("batch", "convert", str(walks), "--out", str(tmp_path / "typo"),
                      "--model", str(body), "--to", "tum", "-O", "lnk=RLEG_ANKLE_R", "-j", "1")
    assert typo.returncode == 2 and "did you mean 'link'" in typo.stdout


def test_batch_validate_takes_reader_options(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "dup.tum").write_text("1.0 0 0 0 0 0 0 1\n1.0 1 0 0 0 0 0 1\n2.0 2 0 0 0 0 0 1\n")
    plain = _motionkit("batch", "validate", str(data), "--out", str(tmp_path / "r1"), "-j", "1")
    assert plain.returncode == 0 and "1 warning(s)" in plain.stderr
    deduped = _motionkit("batch", "validate", str(data), "--out", str(tmp_path / "r2"), "-j",
                         "1", "-R", "dedupe=true")
    assert deduped.returncode == 0 and "warning" not in deduped.stderr


def test_batch_eval_takes_eval_s_options(tmp_path: Path) -> None:
    import polars as pl

    import motionkit as mk
    from motionkit import evaluation as ev

    noisy_pair(tmp_path, 60, 0.004)  # beyond --max-diff 0.001: nearest finds no pair,
    # interpolation does
    done = _motionkit("batch", "eval", str(tmp_path / "est"), "--ref",
                      str(tmp_path / "gt" / "{name}"), "--out", str(tmp_path / "res"),
                      "--match", "interpolate", "--max-diff", "0.001", "--align", "se3",
                      "-j", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    table = pl.read_parquet(tmp_path / "res" / "results.parquet")
    direct = ev.ape(mk.read(tmp_path / "gt" / "a.tum"), mk.read(tmp_path / "est" / "a.tum"),
                    align="se3", match="interpolate", max_diff=0.001)
    assert table["rmse"][0] == direct.stats["rmse"] and table["match"][0] == "interpolate"
