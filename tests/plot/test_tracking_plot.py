"""The tracking-error figure: one line per body, worst first, at most MAX_LINES; names
drawn as written; the same bytes every time."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from motionkit.plot.tracking import MAX_LINES, save_tracking, tracking_figure


def test_worst_bodies_first_and_capped() -> None:
    times = np.arange(50) / 30.0
    errors = np.tile(np.arange(1, 16) / 1000.0, (50, 1))
    names = [f"body{k}" for k in range(15)]
    axes = tracking_figure(names, times, errors).axes[0]
    labels = [line.get_label() for line in axes.get_lines()]
    assert len(labels) == MAX_LINES and labels[0].startswith("body14 (mean 15 mm)")
    assert "3 more bodies" in axes.get_title()


def test_same_bytes_and_names_as_written(tmp_path: Path) -> None:
    times = np.arange(10) / 30.0
    errors = np.random.default_rng(0).uniform(0, 0.1, (10, 2))
    names = ["$\\frac{$", "plain"]
    first = save_tracking(names, times, errors, tmp_path / "a.png").read_bytes()
    second = save_tracking(names, times, errors, tmp_path / "b.png").read_bytes()
    assert first == second and first.startswith(b"\x89PNG")
