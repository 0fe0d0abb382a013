"""Per-file limits in batch work: one child process per worker, replaced after a file
that goes over a limit or kills it; the files after it are done as usual."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path, PurePosixPath

import pytest

from conftest import corpus_file
from motionkit.dataset import batch
from motionkit.dataset import sandbox as sandbox_module
from motionkit.dataset.batch import Job, Outcome, failed_outcome
from motionkit.dataset.files import Item
from motionkit.dataset.sandbox import Limits, Sandbox, Stopped
from motionkit.errors import MotionkitError

SLOW = ('<mujoco><worldbody><body name="b"><freejoint/>'
        + '<geom type="box" size="0.1 0.2 0.3"/>' * 100_000 + "</body></worldbody></mujoco>")


def _run(sandbox: Sandbox, item: Item) -> Outcome:
    """What a batch worker does with one file, in this sandbox."""
    answer = sandbox.run(batch.WORK, {"job": batch._job_json(Job("validate")),
                                      "item": batch._item_json(item)})
    if isinstance(answer, Stopped):
        return failed_outcome(item.source, answer.reason)
    assert isinstance(answer, dict)
    return Outcome(**answer)


def _item(path: Path) -> Item:
    return Item(path, PurePosixPath(path.name))


@pytest.fixture
def files(tmp_path: Path) -> tuple[Item, Item]:
    slow = tmp_path / "slow.xml"
    slow.write_text(SLOW)
    return _item(corpus_file("evo", "fr2_desk_groundtruth.txt")), _item(slow)


def test_one_child_does_file_after_file(files: tuple[Item, Item]) -> None:
    good, _ = files
    sandbox = Sandbox(Limits(60, 2048))
    try:
        first = _run(sandbox, good)
        assert sandbox.child is not None
        pid = sandbox.child.pid
        second = _run(sandbox, good)
        assert (first.status, second.status) == ("ok", "ok")
        assert sandbox.child is not None and sandbox.child.pid == pid
    finally:
        sandbox.close()


def test_a_file_past_the_time_limit_fails_and_the_next_gets_a_new_child(
        files: tuple[Item, Item]) -> None:
    good, slow = files
    sandbox = Sandbox(Limits(2, None))
    try:
        stopped = _run(sandbox, slow)
        assert stopped.status == "failed" and stopped.row["status"] == "failed"
        assert stopped.error == "took longer than 2 s (--timeout); stopped"
        assert sandbox.child is None
        assert _run(sandbox, good).status == "ok"
    finally:
        sandbox.close()


def test_a_child_killed_mid_file_is_said_and_replaced(files: tuple[Item, Item]) -> None:
    good, slow = files
    sandbox = Sandbox(Limits(None, None))
    try:
        _run(sandbox, good)
        assert sandbox.child is not None
        pid = sandbox.child.pid
        threading.Timer(0.3, os.kill, (pid, signal.SIGKILL)).start()
        killed = _run(sandbox, slow)
        assert killed.error == f"the reading process died (signal {int(signal.SIGKILL)})"
        assert _run(sandbox, good).status == "ok"
    finally:
        sandbox.close()


def test_limits_must_be_positive_numbers() -> None:
    for seconds, memory in ((float("nan"), None), (0.0, None), (None, -5)):
        with pytest.raises(MotionkitError):
            Limits(seconds, memory)


def test_a_child_that_cannot_start_fails_the_file_alone(files: tuple[Item, Item],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    good, _ = files
    sandbox = Sandbox(Limits(60, None))
    monkeypatch.setattr(sandbox_module, "_CHILD", "raise SystemExit(3)")
    try:
        failed = _run(sandbox, good)
        assert failed.status == "failed"
        assert failed.error == "the reading process did not start (it ended at once)"
        monkeypatch.undo()
        assert _run(sandbox, good).status == "ok"
    finally:
        sandbox.close()


def test_each_thread_has_its_own_child(files: tuple[Item, Item]) -> None:
    """A worker of several threads does as many files at once (one child each)."""
    from concurrent.futures import ThreadPoolExecutor

    from motionkit.dataset.sandbox import _close_all, _sandboxes

    good, _ = files
    limits = Limits(60, 1024)
    job = Job("validate", limits=limits)
    try:
        with ThreadPoolExecutor(2) as pool:
            done = list(pool.map(lambda _: batch._limited(job, good), range(4)))
        assert all(outcome.status == "ok" for outcome in done)
        children = {sandbox.child.pid for key, sandbox in _sandboxes.items()
                    if key[1] == limits and sandbox.child is not None}
        assert len(children) == 2
    finally:
        _close_all()


def test_the_pipe_carries_json_and_only_named_handlers(files: tuple[Item, Item]) -> None:
    """No pickle crosses the pipe (an answer comes from a process that has just read an
    untrusted file), and a child runs only the handlers of HANDLERS."""
    good, _ = files
    sandbox = Sandbox(Limits(60, None))
    try:
        with pytest.raises(ValueError):
            sandbox.run("os:system", "true")
        outcome = _run(sandbox, good)
        assert outcome.status == "ok" and isinstance(outcome.row["size"], int)
    finally:
        sandbox.close()
    assert "import pickle" not in Path(sandbox_module.__file__).read_text()
