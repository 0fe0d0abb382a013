"""The clock-offset search on long inputs: a subsample finds it, all poses refine it, and the
work on all poses is a few evaluations whatever the length (issue 22: 2M poses took > 200 s)."""

from __future__ import annotations

import numpy as np
import pytest

from motionkit.evaluation import metrics
from motionkit.evaluation._poses import Poses


def _curve(times: np.ndarray) -> np.ndarray:
    return np.stack([np.sin(times), np.cos(0.7 * times), 0.1 * times], axis=1)


def _poses(times: np.ndarray, shift: float = 0.0) -> Poses:
    quats = np.tile([0.0, 0.0, 0.0, 1.0], (len(times), 1))
    return Poses(times, _curve(times + shift), quats)


@pytest.mark.parametrize("count", [2_000, 3 * metrics.OFFSET_SAMPLE + 7])
def test_a_planted_offset_is_found_and_all_poses_cost_few_evaluations(
        count: int, monkeypatch: pytest.MonkeyPatch) -> None:
    times = np.linspace(0.0, 60.0, count)
    ref, est = _poses(times), _poses(times, shift=0.0137)  # est's clock runs 13.7 ms late
    whole: list[float] = []
    real = metrics._offset_cost

    def counting(e: Poses, r: Poses, offset: float, kind: metrics.Kind, gap: float) -> float:
        if len(e) == count:
            whole.append(offset)
        return real(e, r, offset, kind, gap)

    monkeypatch.setattr(metrics, "_offset_cost", counting)
    found = metrics.estimate_offset(ref, est, kind="none")
    assert found == pytest.approx(0.0137, abs=1e-6)
    if count > metrics.OFFSET_SAMPLE:
        assert len(whole) <= 40  # the refinement only; the scan ran on the subsample


@pytest.mark.parametrize("count", [2_000, 3 * metrics.OFFSET_SAMPLE + 7])
def test_the_offset_stays_inside_the_window_searched(count: int) -> None:
    times = np.linspace(0.0, 60.0, count)
    found = metrics.estimate_offset(_poses(times), _poses(times, shift=0.3), kind="none",
                                    window=0.1)
    assert found == pytest.approx(0.1, abs=1e-9)  # the edge, never past it
