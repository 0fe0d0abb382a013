"""A reference walk and a noisy estimate of it on a late clock, as TUM files (the batch
eval tests)."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def noisy_pair(folder: Path, frames: int, late: float) -> tuple[Path, Path]:
    """``folder/gt/a.tum`` (a random walk at 10 Hz) and ``folder/est/a.tum`` (it with 1 cm
    noise, stamped ``late`` seconds later)."""
    rng = np.random.default_rng(5)
    stamps = np.arange(frames) * 0.1
    xyz = np.cumsum(rng.normal(size=(frames, 3)), axis=0)
    rows = np.column_stack([stamps, xyz, np.zeros((frames, 3)), np.ones(frames)])
    (folder / "gt").mkdir()
    (folder / "est").mkdir()
    np.savetxt(folder / "gt" / "a.tum", rows)
    rows[:, 0] += late
    rows[:, 1:4] += rng.normal(scale=0.01, size=(frames, 3))
    np.savetxt(folder / "est" / "a.tum", rows)
    return folder / "gt" / "a.tum", folder / "est" / "a.tum"
