"""Evaluation pins BLAS to one thread for its thin products: same numbers, limit restored."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from motionkit import evaluation as ev
from motionkit.evaluation import _threads


def _poses(seed: int, n: int = 50_000) -> ev.Poses:
    rng = np.random.default_rng(seed)
    t = np.arange(n) * 0.01
    p = np.cumsum(rng.normal(size=(n, 3)), axis=0)
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return ev.Poses(t, p, q)


def _blas_threads() -> list[int]:
    return [int(pool["num_threads"]) for pool in threadpool_info() if pool["user_api"] == "blas"]


def _numbers(ref: ev.Poses, est: ev.Poses) -> tuple[bytes, ...]:
    ape = ev.ape(ref, est, align="sim3", relation="full")
    rpe = ev.rpe(ref, est, delta=1)
    return (ape.errors.tobytes(), rpe.errors.tobytes(), ape.alignment.rotation.tobytes(),
            ape.alignment.translation.tobytes())


def test_thread_settings_give_identical_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pinned (the default) equals unpinned BLAS at 1, 2 and 4 threads, bit for bit."""
    ref, est = _poses(1), _poses(2)
    pinned = _numbers(ref, est)
    monkeypatch.setattr(_threads, "one_blas_thread", contextlib.nullcontext)
    for threads in (1, 2, 4):
        with threadpool_limits(threads, user_api="blas"):
            assert _numbers(ref, est) == pinned


def test_blas_limit_is_restored() -> None:
    ref, est = _poses(3, 1000), _poses(4, 1000)
    with threadpool_limits(2, user_api="blas"):
        before = _blas_threads()
        ev.ape(ref, est, align="se3")
        assert _blas_threads() == before
