"""Writing a whole folder so that no reader ever sees half of it: build it in a temporary
sibling, then rename it into place (a dataset already there is swapped out, then removed)."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

from ..._io import TMP_SUFFIX, remove_stale
from ...errors import ConversionError, MotionkitError
from . import layout


def check_target(target: Path) -> None:
    """Refuse a target that is a file, or a folder that holds something other than a
    LeRobot dataset (it would be replaced). A symlink is replaced itself, never followed."""
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode):
        return
    if not stat.S_ISDIR(info.st_mode):
        raise ConversionError(f"{target}: is a file, not a dataset folder; refused (it would be "
                              "replaced)")
    if any(target.iterdir()) and not (target / layout.INFO).is_file():
        raise ConversionError(f"{target}: is a folder that holds something other than a LeRobot "
                              "dataset; refused (it would be replaced)")


@contextlib.contextmanager
def building(target: Path) -> Iterator[Path]:
    """A new empty folder beside ``target``; on success it replaces ``target``, on any
    error it is removed and ``target`` is left as it was."""
    check_target(target)
    parent = target.parent
    if not parent.is_dir():
        raise MotionkitError(f"cannot write {target}: the folder {parent} does not exist")
    remove_stale(target, folders=True)
    tmp = parent / f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}{TMP_SUFFIX}"
    try:
        tmp.mkdir()
        yield tmp
        _swap(tmp, target)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, OSError):
            raise MotionkitError(f"cannot write {target}: {exc.strerror or exc}") from None
        raise


def _swap(new: Path, target: Path) -> None:
    if target.is_symlink():
        target.unlink()
    elif target.exists():
        old = target.parent / f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}.old{TMP_SUFFIX}"
        os.rename(target, old)
        try:
            os.rename(new, target)
        except OSError:
            os.rename(old, target)  # put the old dataset back
            raise
        shutil.rmtree(old, ignore_errors=True)
        return
    os.rename(new, target)
