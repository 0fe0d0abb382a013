"""Shared fixtures: where the real-world corpus lives, and how its absence is handled.

The corpus is found through ``MOTIONKIT_CORPUS`` (default ``../shared/corpus`` next to the
repository). Without it corpus tests skip, unless ``MOTIONKIT_REQUIRE_CORPUS=1`` (set by
``.ci/run``), which turns every such skip into a failure.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

import pytest

REPO = Path(__file__).resolve().parents[1]
#: Fixtures of our own (small files made for one rule each).
DATA = Path(__file__).resolve().parent / "data"


def corpus_root() -> Path:
    return Path(os.environ.get("MOTIONKIT_CORPUS", REPO.parent / "shared" / "corpus"))


def _require() -> bool:
    return os.environ.get("MOTIONKIT_REQUIRE_CORPUS", "") not in ("", "0")


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The corpus folder; skips (or fails when required) if it is missing."""
    root = corpus_root()
    if not root.is_dir():
        message = f"corpus not found at {root} (set MOTIONKIT_CORPUS)"
        if _require():
            pytest.fail(message)
        pytest.skip(message)
    return root


def corpus_file(*parts: str) -> Path:
    """A file inside the corpus; skips (or fails when required) if it is missing."""
    path = corpus_root().joinpath(*parts)
    if not path.exists():
        message = f"corpus file missing: {path}"
        if _require():
            pytest.fail(message)
        pytest.skip(message)
    return path


def corpus_names(names: list[str]) -> list[str]:
    """Parameters found in the corpus, or one placeholder when it is missing: its test then
    skips (or fails under ``MOTIONKIT_REQUIRE_CORPUS``) through :func:`corpus_file`,
    instead of pytest skipping an empty parameter set that CI would count as nothing."""
    return names or ["(corpus missing)"]


def require_peer(module: str) -> object:
    """Import a peer used as an oracle (dartpy, trajectopy, evo, rosbags).

    Peers are in the ``test`` extra, so a missing one is a broken install: the test fails
    under ``MOTIONKIT_REQUIRE_CORPUS`` (CI) and skips elsewhere.
    """
    try:
        peer = __import__(module)
    except ImportError as exc:
        if _require():
            pytest.fail(f"peer {module} is not importable: {exc}")
        pytest.skip(f"peer {module} is not installed")
    if module == "mujoco":  # its warnings to stderr (captured), never a MUJOCO_LOG.TXT in the cwd
        peer.set_mju_user_warning(_mujoco_warning)
    return peer


def require_compiled(built: bool, what: str) -> None:
    """The tests of a compiled module (an optional build, ``setup.py``): where a C compiler
    is (``$CC``, else Python's own, else ``cc``) the install must have built it, and its
    absence fails; on a machine without one the tests skip (the pure-Python paths run)."""
    if built:
        return
    compiler = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is not None:
        pytest.fail(f"{what} is not built, though a C compiler ({compiler}) is here")
    pytest.skip(f"{what} is not built: no C compiler here (the pure-Python path runs)")


def _mujoco_warning(message: str) -> None:
    print(f"MuJoCo warning: {message}", file=sys.stderr)


@contextmanager
def cpu_bound(seconds: float) -> Iterator[None]:
    """Fail if the block spends more than SECONDS of this process's CPU time.

    A bound on work (a runaway loop, an expanded bomb), set at ten times what the work
    needs, not a wall-clock deadline that a busy machine could miss. Speed is measured in
    ``bench/``.
    """
    start = time.process_time()
    yield
    used = time.process_time() - start
    assert used < seconds, f"{used:.2f} s of CPU, bound {seconds} s: runaway work"


@contextmanager
def python_lines(limit: int) -> Iterator[None]:
    """Fail if the block runs more than LIMIT lines of Python: a work bound that counts
    (a per-byte or per-item loop in Python, where one C call over the data was meant), so
    no machine's load can make it flake. The count stops the block once it passes."""
    count = 0

    def local(frame: FrameType, event: str, arg: object) -> object:
        nonlocal count
        if event == "line":
            count += 1
            if count > limit:
                raise AssertionError(f"more than {limit:,} lines of Python: runaway work")
        return local

    previous = sys.gettrace()
    sys.settrace(lambda frame, event, arg: local)
    try:
        yield
    finally:
        sys.settrace(previous)


def use_polars(monkeypatch: pytest.MonkeyPatch, on: bool) -> None:
    """Force the optional polars number reader on (skips without polars) or off."""
    from motionkit import _accel

    module = require_peer("polars") if on else None
    monkeypatch.setattr(_accel, "polars_for", lambda size: module)
