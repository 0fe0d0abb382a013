"""Writes: no stray temporary after a kill -9, special files refused, full disk named."""

from __future__ import annotations

import errno
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from conftest import corpus_file
from motionkit import _io
from motionkit._io import TMP_SUFFIX, atomic_write

WRITER = """
import sys
from motionkit._io import atomic_write
with atomic_write(sys.argv[1], "wb") as handle:
    chunk = b"x" * (1 << 20)
    for index in range(100_000):  # ~100 GB: killed long before
        handle.write(chunk)
        if index == 8:
            handle.flush()
            print("writing", flush=True)
"""


def _motion() -> mk.Motion:
    motion = mk.Motion()
    motion.add(mk.Track("joints", "value", np.ones((3, 2)), mk.Timeline.uniform(10, 3)))
    return motion


def test_kill_during_a_large_write_leaves_no_stray_file_after_the_next_write(
        tmp_path: Path) -> None:
    target = tmp_path / "big.seq"
    target.write_text("old")
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(target)],
                             stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline().strip() == "writing"
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    stray = [name for name in os.listdir(tmp_path) if name.endswith(TMP_SUFFIX)]
    assert len(stray) == 1 and stray[0].startswith(".big.seq.")  # recognisable
    assert target.read_text() == "old"  # the target was never touched
    time.sleep(0.05)  # the next writer starts after the stray file's last change
    subprocess.run([sys.executable, "-c", "import sys, numpy as np, motionkit as mk\n"
                    "m = mk.Motion()\n"
                    "m.add(mk.Track('joints', 'value', np.ones((3, 2)), "
                    "mk.Timeline.uniform(10, 3)))\n"
                    "mk.write(sys.argv[1], m)", str(target)], check=True, timeout=60)
    assert os.listdir(tmp_path) == ["big.seq"]
    assert mk.read(target).frames == 3


def test_a_live_writers_temporary_is_kept(tmp_path: Path) -> None:
    target = tmp_path / "out.seq"
    live = tmp_path / f".out.seq.{os.getppid()}.0000{TMP_SUFFIX}"  # a running process
    live.write_text("partial")
    os.utime(live, (0, 0))
    mk.write(target, _motion())
    assert live.exists()


def test_failure_removes_the_temporary(tmp_path: Path) -> None:
    target = tmp_path / "out.seq"
    with pytest.raises(mk.MotionkitError), atomic_write(target, "w") as handle:
        handle.write("half")
        raise OSError(errno.EIO, "I/O error")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("dangling", [False, True], ids=["to a file", "dangling"])
def test_a_symlink_target_is_replaced_never_written_through(dangling: bool, tmp_path: Path) -> None:
    """A link another user left in a shared folder must not aim our write at their file."""
    victim = tmp_path / "victim" / "precious.traj"
    victim.parent.mkdir()
    if not dangling:
        victim.write_text("precious")
    link = tmp_path / "out.traj"
    link.symlink_to(victim)
    result = subprocess.run([sys.executable, "-m", "motionkit", "convert",
                             str(corpus_file("trajectopy", "KITTI_gt.traj")), str(link)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert not link.is_symlink() and mk.read(link).frames > 0
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(link.stat().st_mode) == 0o666 & ~umask  # a new file's, not the link's 0777
    assert (victim.read_text() == "precious") if not dangling else not victim.exists()


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_special_files_are_refused_not_replaced(kind: str, tmp_path: Path) -> None:
    target = tmp_path / "target.seq"
    if kind == "fifo":
        os.mkfifo(target)
    else:
        target.mkdir()
    with pytest.raises(mk.ConversionError, match="not a regular file"):
        mk.write(target, _motion())
    assert os.listdir(tmp_path) == ["target.seq"]
    assert not target.is_file()


def test_device_is_refused() -> None:
    with pytest.raises(mk.ConversionError, match="character device"):
        mk.write("/dev/null", _motion(), format="seq")


def test_full_disk_is_a_motionkit_error_naming_the_target(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_io.os, "fsync", full)
    target = tmp_path / "full.seq"
    target.write_text("old")
    with pytest.raises(mk.MotionkitError, match=r"full\.seq.*No space left"):
        mk.write(target, _motion())
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["full.seq"]
